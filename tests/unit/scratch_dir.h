// A fresh folder under /tmp for one unit test, removed with all it holds
// when the test ends, and a file's whole text.
#pragma once

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <unistd.h>

namespace audiod::test {

class ScratchDir {
public:
    ScratchDir() {
        char path[] = "/tmp/audiod-unit-XXXXXX";
        BOOST_REQUIRE(::mkdtemp(path) != nullptr);
        path_ = path;
    }
    ~ScratchDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;

    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

// "" for a file that cannot be read.
inline std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace audiod::test

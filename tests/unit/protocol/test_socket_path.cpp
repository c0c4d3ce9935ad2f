// The socket location rule, identical for server and clients.
#include "protocol/socket_path.h"

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

using namespace audiod;

namespace {

// Sets or unsets an environment variable for one test, restoring it after.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value)
        : name_(name) {
        if (const char* old = std::getenv(name)) {
            old_ = old;
        }
        if (value) {
            ::setenv(name, value, 1);
        } else {
            ::unsetenv(name);
        }
    }
    ~ScopedEnv() {
        if (old_) {
            ::setenv(name_, old_->c_str(), 1);
        } else {
            ::unsetenv(name_);
        }
    }

private:
    const char* name_;
    std::optional<std::string> old_;
};

} // namespace

BOOST_AUTO_TEST_SUITE(socket_path)

BOOST_AUTO_TEST_CASE(precedence) {
    ScopedEnv explicit_path("AUDIOD_SOCKET", "/x/y/sock");
    ScopedEnv runtime("XDG_RUNTIME_DIR", "/run/user/7");
    BOOST_CHECK_EQUAL(default_socket_path(), "/x/y/sock");
    BOOST_CHECK(socket_path_from_environment());
    {
        ScopedEnv none("AUDIOD_SOCKET", nullptr);
        BOOST_CHECK_EQUAL(default_socket_path(), "/run/user/7/audiod/socket");
        BOOST_CHECK(!socket_path_from_environment());
        ScopedEnv no_runtime("XDG_RUNTIME_DIR", nullptr);
        BOOST_CHECK_EQUAL(default_socket_path(),
                          "/tmp/audiod-" + std::to_string(::getuid()) + "/socket");
    }
}

BOOST_AUTO_TEST_CASE(directory_created_private_and_tightened) {
    char base[] = "/tmp/audiod-test-XXXXXX";
    BOOST_REQUIRE(::mkdtemp(base));
    const std::string dir = std::string(base) + "/audiod";
    BOOST_CHECK_EQUAL(prepare_socket_directory(dir + "/socket", true), "");
    struct stat st {};
    BOOST_REQUIRE(::stat(dir.c_str(), &st) == 0);
    BOOST_CHECK_EQUAL(st.st_mode & 0777, 0700u);

    ::chmod(dir.c_str(), 0755);
    BOOST_CHECK_EQUAL(prepare_socket_directory(dir + "/socket", true), "");
    BOOST_REQUIRE(::stat(dir.c_str(), &st) == 0);
    BOOST_CHECK_EQUAL(st.st_mode & 0777, 0700u);

    // A directory the user chose is left as it is.
    ::chmod(dir.c_str(), 0755);
    BOOST_CHECK_EQUAL(prepare_socket_directory(dir + "/socket", false), "");
    BOOST_REQUIRE(::stat(dir.c_str(), &st) == 0);
    BOOST_CHECK_EQUAL(st.st_mode & 0777, 0755u);

    // A file where the directory should be is an error with a reason.
    const std::string file = std::string(base) + "/file";
    ::close(::creat(file.c_str(), 0600));
    BOOST_CHECK_NE(prepare_socket_directory(file + "/socket", true), "");
    ::unlink(file.c_str());
    ::rmdir(dir.c_str());
    ::rmdir(base);
}

BOOST_AUTO_TEST_SUITE_END()

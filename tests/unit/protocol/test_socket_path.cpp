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

BOOST_AUTO_TEST_CASE(directory_created_private_and_an_open_one_refused) {
    char base[] = "/tmp/audiod-test-XXXXXX";
    BOOST_REQUIRE(::mkdtemp(base));
    const std::string dir = std::string(base) + "/audiod";
    BOOST_CHECK_EQUAL(prepare_socket_directory(dir + "/socket", true), "");
    struct stat st {};
    BOOST_REQUIRE(::stat(dir.c_str(), &st) == 0);
    BOOST_CHECK_EQUAL(st.st_mode & 0777, 0700u);

    BOOST_CHECK_EQUAL(prepare_socket_directory(dir + "/socket", true), "");

    // One that others could write to (or read) is refused, and left alone
    // for the user to inspect.
    ::chmod(dir.c_str(), 0777);
    const std::string refused = prepare_socket_directory(dir + "/socket", true);
    BOOST_CHECK_MESSAGE(refused.find("has mode 0777") != std::string::npos &&
                            refused.find("chmod 700 " + dir) != std::string::npos,
                        refused);
    BOOST_REQUIRE(::stat(dir.c_str(), &st) == 0);
    BOOST_CHECK_EQUAL(st.st_mode & 0777, 0777u);
    ::chmod(dir.c_str(), 0750);
    BOOST_CHECK_NE(prepare_socket_directory(dir + "/socket", true), "");

    // A symbolic link to a private directory is not the directory itself.
    const std::string link = std::string(base) + "/link";
    ::chmod(dir.c_str(), 0700);
    BOOST_REQUIRE(::symlink(dir.c_str(), link.c_str()) == 0);
    BOOST_CHECK_MESSAGE(prepare_socket_directory(link + "/socket", true).find("not a directory") !=
                            std::string::npos,
                        prepare_socket_directory(link + "/socket", true));
    ::unlink(link.c_str());

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

// The socket location rule, identical for server and clients.
#include "protocol/request_channel.h"
#include "protocol/socket_path.h"

#include "audiod/audiod.h"

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
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

BOOST_AUTO_TEST_CASE(clients_try_their_own_server_then_the_system_one) {
    {
        ScopedEnv explicit_path("AUDIOD_SOCKET", "/x/y/sock");
        BOOST_CHECK(client_socket_paths() == std::vector<std::string>{"/x/y/sock"});
    }
    ScopedEnv none("AUDIOD_SOCKET", nullptr);
    ScopedEnv runtime("XDG_RUNTIME_DIR", "/run/user/7");
    BOOST_CHECK(client_socket_paths() ==
                (std::vector<std::string>{"/run/user/7/audiod/socket", "/run/audiod/socket"}));

    // The first that accepts wins, and the caller learns which.
    char base[] = "/tmp/audiod-test-XXXXXX";
    BOOST_REQUIRE(::mkdtemp(base));
    const std::string user = std::string(base) + "/user";
    const std::string system = std::string(base) + "/system";
    const auto listen_at = [](const std::string& path) {
        const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
        BOOST_REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
        BOOST_REQUIRE(::listen(fd, 4) == 0);
        return fd;
    };
    proto::RequestChannel channel;
    std::string used;
    BOOST_CHECK_EQUAL(channel.connect_first({user, system}, &used), AUDIOD_E_NOSERVER);
    const int system_fd = listen_at(system);
    BOOST_CHECK_EQUAL(channel.connect_first({user, system}, &used), 0);
    BOOST_CHECK_EQUAL(used, system);
    const int user_fd = listen_at(user);
    BOOST_CHECK_EQUAL(channel.connect_first({user, system}, &used), 0);
    BOOST_CHECK_EQUAL(used, user);
    ::close(user_fd);
    ::close(system_fd);
    ::unlink(user.c_str());
    ::unlink(system.c_str());
    ::rmdir(base);
}

BOOST_AUTO_TEST_CASE(a_client_trusts_only_a_private_directory_of_its_own_in_tmp) {
    char base[] = "/tmp/audiod-test-XXXXXX";
    BOOST_REQUIRE(::mkdtemp(base));
    const std::string dir = std::string(base) + "/audiod";
    BOOST_CHECK(!private_to_user(dir + "/socket")); // missing
    BOOST_REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
    BOOST_CHECK(private_to_user(dir + "/socket"));
    ::chmod(dir.c_str(), 0755);
    BOOST_CHECK(!private_to_user(dir + "/socket")); // others may have put a socket in it
    ::chmod(dir.c_str(), 0700);
    if (::getuid() == 0) {
        BOOST_REQUIRE(::chown(dir.c_str(), 41101, 41101) == 0);
        BOOST_CHECK(!private_to_user(dir + "/socket")); // another user's
    }
    const std::string link = std::string(base) + "/link";
    BOOST_REQUIRE(::symlink(dir.c_str(), link.c_str()) == 0);
    BOOST_CHECK(!private_to_user(link + "/socket"));
    ::unlink(link.c_str());
    ::rmdir(dir.c_str());
    ::rmdir(base);
}

BOOST_AUTO_TEST_CASE(a_shared_directory_must_be_writable_by_its_owner_alone) {
    char base[] = "/tmp/audiod-test-XXXXXX";
    BOOST_REQUIRE(::mkdtemp(base));
    const std::string dir = std::string(base) + "/run";
    BOOST_CHECK_EQUAL(prepare_shared_socket_directory(dir + "/socket"), "");
    struct stat st {};
    BOOST_REQUIRE(::stat(dir.c_str(), &st) == 0);
    BOOST_CHECK_EQUAL(st.st_mode & 0777, 0755u); // users must reach the socket
    ::chmod(dir.c_str(), 0775);
    BOOST_CHECK_MESSAGE(
        prepare_shared_socket_directory(dir + "/socket").find("writable by others") !=
            std::string::npos,
        prepare_shared_socket_directory(dir + "/socket"));
    ::rmdir(dir.c_str());
    ::rmdir(base);
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

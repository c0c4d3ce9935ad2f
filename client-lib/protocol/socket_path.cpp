#include "protocol/socket_path.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace audiod {

std::string default_socket_path() {
    if (const char* explicit_path = std::getenv("AUDIOD_SOCKET"); explicit_path && *explicit_path) {
        return explicit_path;
    }
    if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime && *runtime) {
        return std::string(runtime) + "/audiod/socket";
    }
    return "/tmp/audiod-" + std::to_string(::getuid()) + "/socket";
}

std::vector<std::string> client_socket_paths() {
    if (socket_path_from_environment()) {
        return {default_socket_path()};
    }
    return {default_socket_path(), kSystemSocketPath};
}

bool socket_path_from_environment() {
    const char* explicit_path = std::getenv("AUDIOD_SOCKET");
    return explicit_path && *explicit_path;
}

std::string prepare_socket_directory(const std::string& socket_path, bool enforce_private) {
    const auto slash = socket_path.rfind('/');
    if (slash == std::string::npos || slash == 0) {
        return {};
    }
    const std::string dir = socket_path.substr(0, slash);
    if (::mkdir(dir.c_str(), 0700) == 0) {
        return {};
    }
    if (errno != EEXIST) {
        return "cannot create " + dir + ": " + std::strerror(errno);
    }
    if (!enforce_private) {
        return {};
    }
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) {
        return "cannot inspect " + dir + ": " + std::strerror(errno);
    }
    if (!S_ISDIR(st.st_mode)) {
        return dir + " is not a directory";
    }
    if (st.st_uid != ::getuid()) {
        return dir + " belongs to another user (uid " + std::to_string(st.st_uid) + ")";
    }
    if ((st.st_mode & 0077) != 0) {
        // Others could have put something in it while it was open to them;
        // the user decides, not the server.
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        return dir + " has mode " + mode +
               "; it must be private to its owner: check its contents, then chmod 700 " + dir;
    }
    return {};
}

std::string prepare_shared_socket_directory(const std::string& socket_path) {
    const auto slash = socket_path.rfind('/');
    if (slash == std::string::npos || slash == 0) {
        return {};
    }
    const std::string dir = socket_path.substr(0, slash);
    if (::mkdir(dir.c_str(), 0755) == 0) {
        return {};
    }
    if (errno != EEXIST) {
        return "cannot create " + dir + ": " + std::strerror(errno);
    }
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) {
        return "cannot inspect " + dir + ": " + std::strerror(errno);
    }
    if (!S_ISDIR(st.st_mode)) {
        return dir + " is not a directory";
    }
    if (st.st_uid != ::geteuid()) {
        return dir + " belongs to another user (uid " + std::to_string(st.st_uid) + ")";
    }
    if ((st.st_mode & 0022) != 0) {
        return dir + " is writable by others; it must not be: chmod 755 " + dir;
    }
    return {};
}

} // namespace audiod

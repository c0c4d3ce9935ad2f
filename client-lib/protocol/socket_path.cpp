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
    const std::string user = default_socket_path();
    const char* runtime = std::getenv("XDG_RUNTIME_DIR");
    const bool in_tmp = runtime == nullptr || *runtime == '\0';
    if (in_tmp && !private_to_user(user)) {
        return {kSystemSocketPath};
    }
    return {user, kSystemSocketPath};
}

bool socket_path_from_environment() {
    const char* explicit_path = std::getenv("AUDIOD_SOCKET");
    return explicit_path && *explicit_path;
}

namespace {

// The directory part of `socket_path` ("" for none).
std::string directory_of(const std::string& socket_path) {
    const auto slash = socket_path.rfind('/');
    return slash == std::string::npos || slash == 0 ? std::string() : socket_path.substr(0, slash);
}

// Creates `dir` with `mode`; sets `*created`. "" or what went wrong.
std::string make_directory(const std::string& dir, mode_t mode, bool* created) {
    *created = ::mkdir(dir.c_str(), mode) == 0;
    if (!*created && errno != EEXIST) {
        return "cannot create " + dir + ": " + std::strerror(errno);
    }
    return {};
}

// An existing `dir` must be a real directory (not a link) of the server's
// user; fills `st`. "" or what is wrong.
std::string check_own_directory(const std::string& dir, struct stat& st) {
    if (::lstat(dir.c_str(), &st) != 0) {
        return "cannot inspect " + dir + ": " + std::strerror(errno);
    }
    if (!S_ISDIR(st.st_mode)) {
        return dir + " is not a directory";
    }
    if (st.st_uid != ::geteuid()) {
        return dir + " belongs to another user (uid " + std::to_string(st.st_uid) + ")";
    }
    return {};
}

} // namespace

bool private_to_user(const std::string& socket_path) {
    const std::string dir = directory_of(socket_path);
    struct stat st {};
    return !dir.empty() && check_own_directory(dir, st).empty() && (st.st_mode & 0077) == 0;
}

std::string prepare_socket_directory(const std::string& socket_path, bool enforce_private) {
    const std::string dir = directory_of(socket_path);
    bool created = false;
    if (dir.empty()) {
        return {};
    }
    if (std::string error = make_directory(dir, 0700, &created);
        !error.empty() || created || !enforce_private) {
        return error;
    }
    struct stat st {};
    if (std::string error = check_own_directory(dir, st); !error.empty()) {
        return error;
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
    const std::string dir = directory_of(socket_path);
    bool created = false;
    if (dir.empty()) {
        return {};
    }
    if (std::string error = make_directory(dir, 0755, &created); !error.empty() || created) {
        return error;
    }
    struct stat st {};
    if (std::string error = check_own_directory(dir, st); !error.empty()) {
        return error;
    }
    if ((st.st_mode & 0022) != 0) {
        return dir + " is writable by others; it must not be: chmod 755 " + dir;
    }
    return {};
}

} // namespace audiod

#include "os/atomic_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace audiod {

namespace {

void make_parent_directories(const std::string& path) {
    for (size_t slash = path.find('/', 1); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
        ::mkdir(path.substr(0, slash).c_str(), 0700);
    }
}

int write_all(int fd, const std::string& text) {
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -errno;
        }
        done += static_cast<size_t>(n);
    }
    return 0;
}

} // namespace

Status replace_file_atomically(const std::string& path, const std::string& text) {
    make_parent_directories(path);
    const std::string temp = path + ".tmp";
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        return Status::failure("cannot write " + temp + ": " + std::strerror(errno));
    }
    int rc = write_all(fd, text);
    if (rc == 0 && ::fsync(fd) != 0) {
        rc = -errno;
    }
    ::close(fd);
    if (rc == 0 && ::rename(temp.c_str(), path.c_str()) != 0) {
        rc = -errno;
    }
    if (rc != 0) {
        ::unlink(temp.c_str());
        return Status::failure("cannot save " + path + ": " + std::strerror(-rc));
    }
    // The rename is durable only once the directory entry is on disk.
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
    if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
    return Status::success();
}

} // namespace audiod

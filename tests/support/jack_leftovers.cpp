#include "jack_leftovers.h"

#include <filesystem>
#include <system_error>
#include <unistd.h>

namespace audiod::test {

void remove_jack_leftovers(const std::string& server) {
    std::string semaphore = "jack_sem.";
    semaphore.append(std::to_string(::getuid())).append("_").append(server).append("_");
    std::string socket = "jack_";
    socket.append(server).append("_");
    std::error_code ignored;
    for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", ignored)) {
        const std::string file = entry.path().filename().string();
        if (file.starts_with(semaphore) || file.starts_with(socket)) {
            std::filesystem::remove(entry.path(), ignored);
        }
    }
}

} // namespace audiod::test

#include "engine/state_file_writer.h"

#include "os/atomic_file.h"

#include <condition_variable>
#include <mutex>
#include <optional>
#include <utility>

namespace audiod {

struct StateFileWriter::Shared {
    std::mutex mutex;
    std::condition_variable changed;
    std::optional<std::pair<std::string, std::string>> pending; // path, text
    bool writing = false;
    bool stopping = false;
    std::string failure;

    // Thread: the writer's.
    void run() {
        std::unique_lock lock(mutex);
        for (;;) {
            changed.wait(lock, [this] { return pending.has_value() || stopping; });
            if (!pending) {
                return; // stopping, with nothing left to write
            }
            const auto [path, text] = std::move(*pending);
            pending.reset();
            writing = true;
            lock.unlock();
            const Status saved = replace_file_atomically(path, text);
            lock.lock();
            writing = false;
            if (!saved.ok()) {
                failure = saved.reason();
            }
            changed.notify_all();
        }
    }
};

StateFileWriter::StateFileWriter()
    : shared_(std::make_shared<Shared>()) {
    // The thread holds the shared part, so that one left behind by the
    // destructor still has it.
    thread_ = std::thread([shared = shared_] { shared->run(); });
}

StateFileWriter::~StateFileWriter() {
    const bool done = flush(kStopWait);
    {
        std::lock_guard lock(shared_->mutex);
        shared_->stopping = true;
    }
    shared_->changed.notify_all();
    if (done) {
        thread_.join();
    } else {
        thread_.detach(); // still in the disk's hands
    }
}

void StateFileWriter::submit(std::string path, std::string text) {
    {
        std::lock_guard lock(shared_->mutex);
        shared_->pending.emplace(std::move(path), std::move(text));
    }
    shared_->changed.notify_all();
}

bool StateFileWriter::flush(std::chrono::milliseconds limit) {
    std::unique_lock lock(shared_->mutex);
    return shared_->changed.wait_for(
        lock, limit, [this] { return !shared_->pending.has_value() && !shared_->writing; });
}

std::string StateFileWriter::take_failure() {
    std::lock_guard lock(shared_->mutex);
    return std::exchange(shared_->failure, std::string());
}

} // namespace audiod

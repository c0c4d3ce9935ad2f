// Writes the state file on a thread of its own, so that the control thread
// never waits for the disk. The file is replaced atomically, which takes two
// fsyncs, and a stress pass caught the control thread in one of them for
// over 10 s: every client's request waited behind it. The newest text wins;
// a text not yet being written is replaced by a newer one. Thread: control,
// except where a function says otherwise.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace audiod {

class StateFileWriter {
public:
    StateFileWriter();
    // Waits for a write in progress (at most kStopWait); one that takes
    // longer is left to finish on its own.
    ~StateFileWriter();
    StateFileWriter(const StateFileWriter&) = delete;
    StateFileWriter& operator=(const StateFileWriter&) = delete;

    static constexpr std::chrono::seconds kStopWait{5};

    // Writes `text` to `path` soon.
    void submit(std::string path, std::string text);
    // Waits until everything submitted is written, at most `limit`; false
    // if it is not.
    bool flush(std::chrono::milliseconds limit);
    // Why the last write failed, once; "" if none failed since last asked.
    [[nodiscard]] std::string take_failure();

private:
    struct Shared;
    std::shared_ptr<Shared> shared_;
    std::thread thread_;
};

} // namespace audiod

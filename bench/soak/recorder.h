// Records a sink's monitor through libaudiod, as any recording client
// does, and reads each frame into the sink's ledger as it comes: the
// soak checks what every sink played without storing an hour of it. Or,
// given a command (PipeWire's pw-record), reads raw s16le stereo from
// its standard output, the same ledger judging another server.
#pragma once

#include "support/stream_ledger.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace audiod::soak {

class Recorder {
public:
    Recorder(std::string sink, test::LatestNumbers& latest,
             std::chrono::steady_clock::time_point start, std::vector<std::string> command = {});
    ~Recorder();
    Recorder(const Recorder&) = delete;

    // Ends the recording and closes the ledger's last run.
    void stop();
    [[nodiscard]] const test::SinkLedger& ledger() const { return ledger_; }
    [[nodiscard]] const std::string& sink() const { return sink_; }
    // The times (seconds into the soak) around which the recording fell
    // behind and lost frames, as the stream's overruns counted them; and
    // whether it ever failed to open.
    [[nodiscard]] std::vector<double> overruns() const;
    [[nodiscard]] std::string failure() const;
    // Whether its record stream is made (and reading).
    [[nodiscard]] bool recording() const { return recording_; }
    [[nodiscard]] bool stopping() const { return stopping_; }

private:
    void run();
    void run_command();
    double now_s() const;

    std::string sink_;
    test::SinkLedger ledger_;
    std::chrono::steady_clock::time_point start_;
    std::atomic<bool> stopping_{false};
    std::atomic<bool> recording_{false};
    mutable std::mutex mutex_;
    std::vector<double> overruns_;
    std::string failure_;
    std::vector<std::string> command_;
    std::thread thread_;
};

} // namespace audiod::soak

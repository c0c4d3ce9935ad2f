// Follows a ptp4l (linuxptp) on this machine: once a second asks it, on
// its management socket, how far this machine's clock is from the PTP
// grandmaster's and what timescale the grandmaster counts
// (ptp_management.h), and keeps the answer where the rt thread reads it.
//
// Why: an AES67 stream's RTP times count the grandmaster's time. Where
// ptp4l steers the system clock (and sets the kernel's TAI offset),
// CLOCK_TAI is that time and no following is needed. But many machines
// must not have their clock stepped by whatever grandmaster a network
// offers (NTP already keeps it), or cannot (a container); ptp4l then runs
// with `free_running 1`: it measures and steers nothing. Following it,
// audiod reads the grandmaster's time as the wall clock less the offset
// ptp4l measured, as GStreamer's GstPtpClock does with a PTP client of its
// own, and a receiver plays on that time. Where ptp4l does steer the
// clock the offset it reports is near zero and following is harmless.
//
// The answers are filtered (ptp_offset_filter.h: smoothed, a lone
// outlier dropped, a confirmed step of over a millisecond taken at once).
// Until ptp4l first answers, and when it stops answering,
// the last known offset holds (a free-running clock drifts slowly) and
// the state says so.
// Thread: start and the destructor on control; the readers on any thread
// (rt included: relaxed atomics); a thread of its own asks.
#pragma once

#include "ptp_offset_filter.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace audiod::rtp {

class PtpFollower {
public:
    // Follows the ptp4l whose management socket (uds_address) is `path`;
    // ptp4l need not run yet. nullptr with a message when the path cannot
    // be a socket's.
    static std::unique_ptr<PtpFollower> start(const std::string& path, std::string& error);
    ~PtpFollower();
    PtpFollower(const PtpFollower&) = delete;
    PtpFollower& operator=(const PtpFollower&) = delete;

    // How far this machine's wall clock (CLOCK_REALTIME) is ahead of the
    // grandmaster's, on the same timescale: subtract it from the wall
    // clock to read the grandmaster's. Thread: any.
    [[nodiscard]] int64_t wall_ahead_ns() const noexcept {
        return wall_ahead_ns_.load(std::memory_order_relaxed);
    }
    // How far the grandmaster's timescale is ahead of UTC: its UTC offset
    // when it counts PTP time (TAI), else 0. Thread: any.
    [[nodiscard]] int64_t timescale_minus_utc_ns() const noexcept {
        return timescale_minus_utc_ns_.load(std::memory_order_relaxed);
    }
    // Whether ptp4l answered within the last three seconds. Thread: any.
    [[nodiscard]] bool answering() const noexcept;

    // "ptp4l=PATH\nptp4l-state=...\n..." for a source's or sink's
    // details: state (following, grandmaster: this machine's clock is the
    // reference, unreachable), the grandmaster, the offset. Thread: any.
    [[nodiscard]] std::string describe() const;

private:
    PtpFollower(std::string path, std::string own, int fd);
    void run();
    void ask();
    void take_answers();

    const std::string path_;
    const std::string own_; // the socket it asks from
    const int fd_;
    std::atomic<int64_t> wall_ahead_ns_{0};
    std::atomic<int64_t> timescale_minus_utc_ns_{0};
    std::atomic<int64_t> answered_at_ns_{0}; // CLOCK_MONOTONIC; 0: never

    mutable std::mutex mutex_; // the rest, for describe()
    uint64_t grandmaster_ = 0;
    bool grandmaster_present_ = false;
    int64_t measured_ns_ = 0; // the last offset ptp4l said, unsmoothed
    PtpOffsetFilter filter_;
    uint64_t answers_ = 0;
    bool known_ = false;

    uint16_t sequence_ = 0; // the thread's own
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

} // namespace audiod::rtp

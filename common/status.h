// The outcome of an operation that succeeds or fails with a reason for a
// person to read ("cannot open ALSA device 'x': No such device"). It takes
// the place of a string that is empty on success, so that success is spelt
// out at every call:
//
//   if (const Status started = sink->start(); !started.ok()) {
//       log_error("engine", started.reason());
//   }
#pragma once

#include <ostream>
#include <string>
#include <utility>

namespace audiod {

class [[nodiscard]] Status {
public:
    [[nodiscard]] static Status success() { return Status(); }
    // `reason` says what went wrong; it must not be empty.
    [[nodiscard]] static Status failure(std::string reason) { return Status(std::move(reason)); }

    [[nodiscard]] bool ok() const noexcept { return reason_.empty(); }
    // What went wrong; "" on success.
    [[nodiscard]] const std::string& reason() const noexcept { return reason_; }

private:
    Status() = default;
    explicit Status(std::string reason)
        : reason_(reason.empty() ? "unknown error" : std::move(reason)) {}

    std::string reason_;
};

inline std::ostream& operator<<(std::ostream& out, const Status& status) {
    return out << (status.ok() ? "ok" : status.reason());
}

} // namespace audiod

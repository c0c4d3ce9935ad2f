#include "ptp_offset_filter.h"

#include <cstdlib>

namespace audiod::rtp {

int64_t PtpOffsetFilter::take(int64_t measured_ns) noexcept {
    if (!held_) {
        held_ = measured_ns;
        return *held_;
    }
    const int64_t change = measured_ns - *held_;
    if (std::llabs(change) <= kConfirmNs) {
        if (doubted_) {
            ++outliers_; // the one before was alone
            doubted_.reset();
        }
        *held_ += change / 4;
        return *held_;
    }
    if (!doubted_ || std::llabs(measured_ns - *doubted_) > kConfirmNs) {
        if (doubted_) {
            ++outliers_;
        }
        doubted_ = measured_ns;
        return *held_;
    }
    doubted_.reset();
    *held_ = std::llabs(change) > kStepNs ? measured_ns : *held_ + change / 4;
    return *held_;
}

} // namespace audiod::rtp

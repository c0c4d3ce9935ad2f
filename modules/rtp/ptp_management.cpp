#include "ptp_management.h"

#include "rtp_packet.h"

#include <cstring>

namespace audiod::rtp {

namespace {

constexpr uint8_t kManagementMessage = 0x0D;
constexpr uint8_t kPtpMajorVersion = 2;
constexpr uint8_t kActionGet = 0;
constexpr uint8_t kActionResponse = 2;
constexpr uint16_t kTlvManagement = 0x0001;
constexpr size_t kPtpHeaderSize = 34;
constexpr size_t kPtpTlvAt = 48; // after the header, the target port and four octets
constexpr size_t kTimeStatusSize = 50;
constexpr size_t kTimePropertiesSize = 4;
constexpr uint8_t kUtcOffsetValid = 1 << 2;
constexpr uint8_t kPtpTimescale = 1 << 3;

uint64_t get_u64(const uint8_t* in) noexcept {
    return (uint64_t{get_u32(in)} << 32) | get_u32(in + 4);
}

} // namespace

void write_ptp_get(uint16_t id, uint16_t sequence, uint32_t sender, uint8_t domain,
                   uint8_t* out) noexcept {
    std::memset(out, 0, kPtpManagementRequestSize);
    out[0] = kManagementMessage;
    out[1] = kPtpMajorVersion;
    put_u16(out + 2, static_cast<uint16_t>(kPtpManagementRequestSize));
    out[4] = domain;
    // The source port: a clock identity and port number of the asker's
    // own, which ptp4l only echoes back.
    put_u32(out + 24, sender);
    put_u16(out + 28, 1);
    put_u16(out + 30, sequence);
    out[32] = 0x04;                              // control: management
    out[33] = 0x7f;                              // logMessageInterval: none
    std::memset(out + kPtpHeaderSize, 0xff, 10); // any clock, any port
    out[46] = kActionGet;
    put_u16(out + kPtpTlvAt, kTlvManagement);
    put_u16(out + kPtpTlvAt + 2, 2); // the id alone: an empty GET
    put_u16(out + kPtpTlvAt + 4, id);
}

bool parse_ptp_answer(std::span<const uint8_t> message, PtpAnswer& answer) noexcept {
    const uint8_t* m = message.data();
    if (message.size() < kPtpTlvAt + 6 || (m[0] & 0x0f) != kManagementMessage ||
        (m[1] & 0x0f) != kPtpMajorVersion) {
        return false;
    }
    const size_t length = get_u16(m + 2);
    if (length > message.size() || length < kPtpTlvAt + 6 || (m[46] & 0x0f) != kActionResponse ||
        get_u16(m + kPtpTlvAt) != kTlvManagement) {
        return false;
    }
    const size_t tlv_length = get_u16(m + kPtpTlvAt + 2); // the id and the data
    if (tlv_length < 2 || kPtpTlvAt + 4 + tlv_length > length) {
        return false;
    }
    const uint8_t* data = m + kPtpTlvAt + 6;
    const size_t data_size = tlv_length - 2;
    PtpAnswer a;
    a.id = get_u16(m + kPtpTlvAt + 4);
    a.sequence = get_u16(m + 30);
    if (a.id == kPtpTimeStatusNp) {
        if (data_size < kTimeStatusSize) {
            return false;
        }
        a.master_offset_ns = static_cast<int64_t>(get_u64(data));
        a.grandmaster_present = get_u32(data + 38) != 0;
        a.grandmaster = get_u64(data + 42);
    } else if (a.id == kPtpTimePropertiesDataSet) {
        if (data_size < kTimePropertiesSize) {
            return false;
        }
        a.utc_offset_s = static_cast<int16_t>(get_u16(data));
        a.utc_offset_valid = (data[2] & kUtcOffsetValid) != 0;
        a.ptp_timescale = (data[2] & kPtpTimescale) != 0;
    } else {
        return false;
    }
    answer = a;
    return true;
}

} // namespace audiod::rtp

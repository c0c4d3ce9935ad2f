// How the RTP sink's and source's options are read (rtp_send_options.cpp,
// rtp_receive_options.cpp): each value checked as it is taken, and a
// refusal that names the option ("rtp sink option port: '0' is not a port
// number below 65535"). Thread: control.
#pragma once

#include "audiod/module.h"
#include "device_options.h"
#include "payload.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace audiod::rtp {

class OptionReader {
public:
    // `device` names the device in refusals ("rtp sink"), which go to
    // `error`.
    OptionReader(const audiod_device_config& config, std::string_view device, std::string& error)
        : options_(config)
        , device_(device)
        , error_(error) {}

    // False, with DeviceOptions' refusal, if a key is not in `specs`.
    [[nodiscard]] bool keys_known(OptionSpecs specs);
    [[nodiscard]] std::optional<std::string> get(std::string_view key) const {
        return options_.get(key);
    }

    // Each of these takes the option's value into `value` if it is given,
    // and leaves `value` alone if not; false, with a refusal, if the value
    // is not what it should be.
    //
    // A whole number from `min` to `max`; `what` says what it should be
    // ("a port number").
    template <class T>
    [[nodiscard]] bool number(const char* key, uint64_t min, uint64_t max, std::string_view what,
                              T& value) {
        const auto text = options_.get(key);
        uint64_t number = 0;
        if (text && (!parse_uint(*text, max, number) || number < min)) {
            refuse(key, "'" + *text + "' is not " + std::string(what));
            return false;
        }
        value = text ? static_cast<T>(number) : value;
        return true;
    }
    // true or false (yes, no, 1, 0).
    [[nodiscard]] bool boolean(const char* key, bool& value);
    // `payload`: opus, l16 or l24.
    [[nodiscard]] bool payload(Encoding& value);

    // Refuses: "rtp sink option KEY: WHY". nullopt, for the reader's caller
    // to return.
    std::nullopt_t refuse(std::string_view key, const std::string& why);

private:
    DeviceOptions options_;
    std::string_view device_;
    std::string& error_;
};

} // namespace audiod::rtp

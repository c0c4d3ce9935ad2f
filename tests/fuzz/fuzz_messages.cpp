// Fuzz target: control messages from a hostile peer. The first byte picks a
// message type; the rest is its body. Decoding must never crash, and any body
// that decodes must re-encode to exactly the same bytes (the encoding is
// canonical, so nothing is silently misread).
#include "protocol/messages.h"

#include <cstdint>
#include <cstring>

namespace {

using namespace audiod::proto;

template <class M>
void check(std::span<const uint8_t> body) {
    M message;
    if (!decode(body, message)) {
        return;
    }
    const auto again = encode(0, message);
    if (again.size() != body.size() + kEnvelopeBytes ||
        std::memcmp(again.data() + kEnvelopeBytes, body.data(), body.size()) != 0) {
        __builtin_trap();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) {
        return 0;
    }
    const std::span<const uint8_t> body(data + 1, size - 1);
    switch (data[0] % 22) {
    case 0:
        check<Hello>(body);
        break;
    case 1:
        check<HelloReply>(body);
        break;
    case 2:
        check<Error>(body);
        break;
    case 3:
        check<CreateStream>(body);
        break;
    case 4:
        check<StreamCreated>(body);
        break;
    case 5:
        check<StreamCommand>(body);
        break;
    case 6:
        check<SetVolume>(body);
        break;
    case 7:
        check<SinkList>(body);
        break;
    case 8:
        check<StreamList>(body);
        break;
    case 9:
        check<ServerInfo>(body);
        break;
    case 10:
        check<AppList>(body);
        break;
    case 11:
        check<SourceList>(body);
        break;
    case 12:
        check<StreamList>(body);
        break;
    case 13:
        check<FlushStream>(body);
        break;
    case 14:
        check<ForgetApp>(body);
        break;
    case 15:
        check<Reloaded>(body);
        break;
    case 16:
        check<KillClient>(body);
        break;
    case 17:
        check<SetDefaultSource>(body);
        break;
    case 18:
        check<SuspendDevice>(body);
        break;
    case 19:
        check<SetGroupMember>(body);
        break;
    case 20:
        check<SetGroupRoom>(body);
        break;
    default:
        // Whole packets, as the server receives them.
        if (const auto envelope = parse_envelope(std::span<const uint8_t>(data, size))) {
            check<CreateStream>(envelope->body);
        }
        break;
    }
    return 0;
}

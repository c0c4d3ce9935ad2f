// Every stream the server holds, by id: what a client may ask for, what
// each client may hold (streams and shared memory), and the stream itself
// with its ring. The table owns every Stream; an RT thread uses one only
// while it is attached (device/placement.h). Thread: control.
#pragma once

#include "device/stream.h"
#include "engine/client_error.h"
#include "protocol/messages.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>

namespace audiod {

struct StreamRequest {
    uint32_t client_id = 0; // 0: the server's own (a relay)
    uint32_t pid = 0;
    std::string app;
    proto::CreateStream params;
};

class StreamTable {
public:
    static constexpr size_t kMaxStreamsPerClient = 64;

    using Map = std::map<uint32_t, std::unique_ptr<Stream>>;

    // Checks what the request asks for (format, rate, channels, volume) and
    // that its client stays within its share (streams; shared memory:
    // `client_memory_mb`), then makes the stream, with a ring of at least
    // two of `largest_cycle` frames, on `placement`'s device. It is not in
    // the table until add().
    [[nodiscard]] std::variant<std::unique_ptr<Stream>, ClientError>
    make(const StreamRequest& request, Placement placement, uint64_t largest_cycle,
         uint32_t client_memory_mb);
    Stream& add(std::unique_ptr<Stream> stream);
    // Frees a stream no RT thread holds.
    void erase(uint32_t id) { streams_.erase(id); }
    void clear() { streams_.clear(); }

    // A stream by id, unless it is closing.
    [[nodiscard]] Stream* find(uint32_t id) const;
    // Streams on `device` (closing ones and those leaving it included): what
    // its RT thread may hold.
    [[nodiscard]] size_t count_on(const Device& device) const;
    [[nodiscard]] const Map& all() const noexcept { return streams_; }

private:
    Map streams_;
    uint32_t next_id_ = 1;
};

} // namespace audiod

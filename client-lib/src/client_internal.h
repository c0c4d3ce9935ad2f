// Internal state behind the opaque handles of the public C API.
#pragma once

#include "audiod/audiod.h"
#include "deadline.h"
#include "messages.h"
#include "packet_socket.h"
#include "request_channel.h"
#include "ring_layout.h"
#include "unique_fd.h"

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

struct audiod_context {
    uint32_t client_id = 0;
    uint32_t server_rate = 0;
    uint32_t server_channels = 0;
    uint32_t server_quantum = 0;

    // Serialises requests: one request and its reply are in flight at a time.
    std::mutex request_mutex;
    audiod::proto::RequestChannel channel;
    std::string last_error;
    std::set<audiod_stream*> streams;

    // Events: an epoll fd over the socket and `events_pending`, an eventfd
    // set while the channel holds queued events (which arrive during
    // requests, when nobody polls the socket).
    audiod::UniqueFd events_epoll;
    audiod::UniqueFd events_pending;

    // RequestChannel::call under the context's lock. Thread: any.
    template <class Request>
    int call(const Request& request, audiod::proto::MsgType reply_type,
             audiod::proto::Packet* reply, const audiod::Deadline& deadline) {
        std::lock_guard lock(request_mutex);
        const int rc = channel.call(request, reply_type, reply, deadline);
        last_error = channel.last_error();
        signal_queued_events();
        return rc;
    }

    // Sets or clears events_pending to match the queue. Call under the lock.
    void signal_queued_events();
};

struct audiod_stream {
    audiod_context* context = nullptr;
    uint32_t id = 0;
    int format = AUDIOD_FORMAT_INVALID;
    uint32_t rate = 0;
    uint32_t channels = 0;
    uint32_t frame_bytes = 0;
    uint64_t capacity = 0;
    uint32_t quantum = 0;
    uint64_t start_threshold = 0;

    audiod::UniqueFd wake_fd;
    void* mapping = nullptr;
    size_t mapping_bytes = 0;
    audiod::RingHeader* header = nullptr;
    uint8_t* data = nullptr;

    // The client's own copy of write_pos: the shared one is only ever
    // published from here, never read back.
    uint64_t write_pos = 0;
};

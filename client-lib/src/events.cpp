// Event subscription: the server pushes Event messages on the control
// socket; requests may read them while waiting for their replies, so they
// queue in the RequestChannel and an eventfd tells poll(2) about the queue.
#include "client_internal.h"

#include <cstring>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

namespace proto = audiod::proto;

namespace {

int kind_of(const std::string& name) {
    static const char* const kNames[] = {"",
                                         "stream-added",
                                         "stream-removed",
                                         "stream-moved",
                                         "stream-changed",
                                         "sink-added",
                                         "sink-removed",
                                         "sink-changed",
                                         "default-changed",
                                         "app-changed",
                                         "source-added",
                                         "source-removed",
                                         "source-changed"};
    for (int i = 1; i < static_cast<int>(std::size(kNames)); ++i) {
        if (name == kNames[i]) {
            return i;
        }
    }
    return AUDIOD_EVENT_OTHER;
}

template <size_t N>
void copy_text(char (&dest)[N], const std::string& text) {
    const size_t n = std::min(text.size(), N - 1);
    std::memcpy(dest, text.data(), n);
    dest[n] = '\0';
}

// Creates the epoll fd and the eventfd on first use. Call under the lock.
int ensure_event_fds(audiod_context* ctx) {
    if (ctx->events_epoll) {
        return 0;
    }
    audiod::UniqueFd epoll(::epoll_create1(EPOLL_CLOEXEC));
    audiod::UniqueFd pending(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!epoll || !pending) {
        return AUDIOD_E_SYSTEM;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    if (::epoll_ctl(epoll.get(), EPOLL_CTL_ADD, ctx->channel.fd(), &ev) != 0 ||
        ::epoll_ctl(epoll.get(), EPOLL_CTL_ADD, pending.get(), &ev) != 0) {
        return AUDIOD_E_SYSTEM;
    }
    ctx->events_epoll = std::move(epoll);
    ctx->events_pending = std::move(pending);
    return 0;
}

} // namespace

void audiod_context::signal_queued_events() {
    if (!events_pending) {
        return;
    }
    uint64_t value = 1;
    if (channel.queued_events() > 0) {
        [[maybe_unused]] const ssize_t w = ::write(events_pending.get(), &value, sizeof value);
    } else {
        [[maybe_unused]] const ssize_t r = ::read(events_pending.get(), &value, sizeof value);
    }
}

extern "C" {

int audiod_subscribe(audiod_context* ctx, int timeout_ms) {
    if (ctx == nullptr) {
        return AUDIOD_E_INVALID;
    }
    {
        std::lock_guard lock(ctx->request_mutex);
        if (const int rc = ensure_event_fds(ctx); rc != 0) {
            return rc;
        }
    }
    return ctx->call(
        proto::Subscribe{}, proto::MsgType::ok, nullptr,
        audiod::Deadline::after_ms(timeout_ms < 0 ? AUDIOD_DEFAULT_TIMEOUT_MS : timeout_ms));
}

int audiod_context_fd(const audiod_context* ctx) {
    if (ctx == nullptr) {
        return AUDIOD_E_INVALID;
    }
    auto* mutable_ctx = const_cast<audiod_context*>(ctx);
    std::lock_guard lock(mutable_ctx->request_mutex);
    if (ensure_event_fds(mutable_ctx) != 0) {
        return AUDIOD_E_SYSTEM;
    }
    return ctx->events_epoll.get();
}

int audiod_next_event(audiod_context* ctx, audiod_event* out) {
    if (ctx == nullptr || out == nullptr) {
        return AUDIOD_E_INVALID;
    }
    std::lock_guard lock(ctx->request_mutex);
    proto::Event event;
    if (!ctx->channel.take_event(event)) {
        if (const int rc = ctx->channel.pump(); rc != 0) {
            return rc;
        }
        if (!ctx->channel.take_event(event)) {
            ctx->signal_queued_events();
            return 0;
        }
    }
    ctx->signal_queued_events();
    std::memset(out, 0, sizeof *out);
    out->kind = kind_of(event.kind);
    copy_text(out->kind_name, event.kind);
    out->stream_id = event.stream_id;
    copy_text(out->app, event.app);
    copy_text(out->sink, event.device);
    copy_text(out->previous_sink, event.previous_device);
    copy_text(out->state, event.state);
    out->volume = event.volume;
    out->muted = event.muted ? 1 : 0;
    return 1;
}

} // extern "C"

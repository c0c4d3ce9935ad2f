#include "client_internal.h"
#include "protocol/socket_path.h"
#include "protocol/version.h"
#include "waiting.h"

#include <cerrno>
#include <cstring>
#include <new>

using audiod::Deadline;
namespace proto = audiod::proto;

extern "C" {

const char* audiod_version(void) {
    return AUDIOD_VERSION_STRING;
}

int audiod_connect(const char* app_name, int timeout_ms, audiod_context** out) {
    if (out == nullptr) {
        return AUDIOD_E_INVALID;
    }
    *out = nullptr;
    const Deadline deadline =
        Deadline::after_ms(timeout_ms < 0 ? AUDIOD_DEFAULT_TIMEOUT_MS : timeout_ms);
    auto* ctx = new (std::nothrow) audiod_context;
    if (ctx == nullptr) {
        return AUDIOD_E_NOMEM;
    }
    ctx->app_name = app_name != nullptr ? app_name : "";
    if (const int rc = ctx->channel.connect_first(audiod::client_socket_paths(), &ctx->socket_path);
        rc != 0) {
        delete ctx;
        return rc;
    }
    ctx->socket_fd.store(ctx->channel.fd());
    audiod::client::watch_for_hangup(*ctx);

    proto::Hello hello;
    hello.app_name = ctx->app_name;
    proto::HelloReply reply;
    int rc = ctx->channel.call_for(hello, &reply, deadline);
    if (rc == 0 && reply.version != proto::kProtocolVersion) {
        rc = AUDIOD_E_VERSION;
    }
    if (rc != 0) {
        delete ctx;
        return rc;
    }
    ctx->client_id = reply.client_id;
    ctx->server_rate = reply.rate;
    ctx->server_channels = reply.channels;
    *out = ctx;
    return 0;
}

void audiod_disconnect(audiod_context* ctx) {
    if (ctx == nullptr) {
        return;
    }
    {
        std::lock_guard lock(ctx->supervisor_mutex);
        ctx->supervisor_stopping = true;
    }
    ctx->supervisor_wakeup.notify_all();
    if (ctx->supervisor.joinable()) {
        ctx->supervisor.join();
    }
    for (;;) {
        audiod_stream* stream = nullptr;
        {
            std::lock_guard lock(ctx->streams_mutex);
            if (ctx->streams.empty()) {
                break;
            }
            stream = ctx->streams.back();
        }
        audiod_stream_close(stream);
    }
    delete ctx;
}

int audiod_server_format(const audiod_context* ctx, uint32_t* rate, uint32_t* channels) {
    if (ctx == nullptr) {
        return AUDIOD_E_INVALID;
    }
    if (rate != nullptr) {
        *rate = ctx->server_rate;
    }
    if (channels != nullptr) {
        *channels = ctx->server_channels;
    }
    return 0;
}

const char* audiod_last_error(const audiod_context* ctx) {
    return ctx != nullptr ? ctx->last_error.c_str() : "";
}

const char* audiod_strerror(int code) {
    switch (code) {
    case AUDIOD_OK:
        return "success";
    case AUDIOD_E_INVALID:
        return "invalid argument";
    case AUDIOD_E_NOSERVER:
        return "no audiod server is running (is the socket path right?)";
    case AUDIOD_E_TIMEOUT:
        return "timed out";
    case AUDIOD_E_PROTOCOL:
        return "protocol error";
    case AUDIOD_E_DISCONNECTED:
        return "connection to the server lost";
    case AUDIOD_E_NOTSUPPORTED:
        return "not supported";
    case AUDIOD_E_NOENTITY:
        return "no such sink or stream";
    case AUDIOD_E_NOMEM:
        return "out of memory";
    case AUDIOD_E_BUSY:
        return "server busy";
    case AUDIOD_E_AGAIN:
        return "operation would block";
    case AUDIOD_E_SYSTEM:
        return "system error";
    case AUDIOD_E_BADSTATE:
        return "not allowed in the stream's current state";
    case AUDIOD_E_REFUSED:
        return "refused by the server";
    case AUDIOD_E_VERSION:
        return "incompatible protocol version";
    case AUDIOD_E_KILLED:
        return "this client was ended on the server (audioctl kill-client)";
    case AUDIOD_E_STALLED:
        return "the server stopped responding";
    case AUDIOD_E_DENIED:
        return "permission denied (the server's socket or the request is not for this user)";
    default:
        return "unknown error";
    }
}

} // extern "C"

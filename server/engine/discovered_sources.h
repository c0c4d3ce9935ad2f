// Network sessions that a source finds by itself. An RTP source with
// `discover = true` listens to session announcements (SAP) and asks,
// through audiod_host::request_source, for a source per session it hears
// of. The request comes from a thread of the module's own: it is queued
// here, and the engine opens the source on its control thread (handle()),
// relayed where its finder's `sink` says; it is closed when the finder
// asks, or when the finder goes.
#pragma once

#include "engine/device_registry.h"

#include <mutex>
#include <string>
#include <vector>

namespace audiod {

class DeviceLifecycle;

class DiscoveredSources {
public:
    // Sources are opened and closed through `lifecycle`.
    DiscoveredSources(DeviceLifecycle& lifecycle, DeviceRegistry& devices);
    DiscoveredSources(const DiscoveredSources&) = delete;
    DiscoveredSources& operator=(const DiscoveredSources&) = delete;

    // audiod_host::request_source; host->server is this object.
    // Thread: any except rt.
    static void request(const audiod_host* host, const char* requester, const char* type,
                        const char* name, const audiod_option* options, size_t option_count,
                        int remove);
    // Opens and closes what was asked for since the last call. Thread: control.
    void handle();
    // Closes the sources `finder` found (it is going). Thread: control.
    void close_found_by(const std::string& finder);

private:
    struct Request {
        std::string requester;
        std::string type;
        std::string name;
        OptionList options;
        bool remove = false;
    };

    DeviceLifecycle& lifecycle_;
    DeviceRegistry& devices_;
    std::mutex mutex_;
    std::vector<Request> requests_; // guarded by mutex_
};

} // namespace audiod

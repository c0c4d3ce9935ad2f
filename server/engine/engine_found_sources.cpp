// Engine: sources that sources find. An RTP source with `discover = true`
// listens to session announcements and asks, through
// audiod_host::request_source, for a source per session it hears of; the
// engine opens them on its control thread (the request comes from a thread
// of the module's own), lets them inherit where their finder plays
// (`sink`), and closes them when asked or when their finder goes.
#include "engine/engine.h"

#include "log.h"
#include "sink_options.h"

#include <algorithm>

namespace audiod {

void Engine::request_source(const audiod_host* host, const char* requester, const char* type,
                            const char* name, const audiod_option* options, size_t option_count,
                            int remove) {
    if (host == nullptr || host->server == nullptr || requester == nullptr || type == nullptr ||
        name == nullptr) {
        return;
    }
    SourceRequest request{requester, type, name, {}, remove != 0};
    for (size_t i = 0; i < option_count && options != nullptr; ++i) {
        if (options[i].key != nullptr && options[i].value != nullptr) {
            request.options.emplace_back(options[i].key, options[i].value);
        }
    }
    auto* engine = static_cast<Engine*>(host->server);
    const std::lock_guard lock(engine->source_requests_mutex_);
    engine->source_requests_.push_back(std::move(request));
}

bool Engine::finds_sources(const std::vector<std::pair<std::string, std::string>>& options) {
    return std::any_of(options.begin(), options.end(), [](const auto& option) {
        bool discover = false;
        return option.first == "discover" && parse_bool(option.second, discover) && discover;
    });
}

void Engine::handle_source_requests() {
    std::vector<SourceRequest> requests;
    {
        const std::lock_guard lock(source_requests_mutex_);
        requests.swap(source_requests_);
    }
    for (SourceRequest& request : requests) {
        const auto finder = std::find_if(devices_.begin(), devices_.end(), [&](const auto& entry) {
            return entry.device->is_source() && entry.device->name() == request.requester;
        });
        if (finder == devices_.end()) {
            continue; // its finder is gone, and what it found with it
        }
        const auto found = std::find_if(devices_.begin(), devices_.end(), [&](const auto& entry) {
            return entry.device->name() == request.name;
        });
        if (request.remove) {
            if (found != devices_.end() && found->found_by == request.requester) {
                log_info("engine", "source " + request.name + " is gone from " + request.requester +
                                       "'s announcements");
                (void)unload_sink(request.name, true);
            }
            continue;
        }
        if (found != devices_.end()) {
            continue; // found before, or the name is taken
        }
        std::vector<std::pair<std::string, std::string>> options = std::move(request.options);
        const PlayRequest play = finder->passes_on;
        if (!play.sink.empty()) {
            options.emplace_back("sink", play.sink);
            options.emplace_back("play-latency-ms", std::to_string(play.latency_ms));
        }
        if (const MaybeError error = load_sink(request.type, request.name, options, true)) {
            log_warning("engine",
                        request.requester + " found a source it cannot open: " + error->message);
            continue;
        }
        for (DeviceEntry& entry : devices_) {
            if (entry.device->name() == request.name) {
                entry.found_by = request.requester;
            }
        }
        log_info("engine", request.requester + " found source " + request.name);
    }
}

void Engine::close_found_sources(const std::string& requester) {
    std::vector<std::string> found;
    for (const DeviceEntry& entry : devices_) {
        if (entry.found_by == requester) {
            found.push_back(entry.device->name());
        }
    }
    for (const std::string& name : found) {
        (void)unload_sink(name, true);
    }
}

} // namespace audiod

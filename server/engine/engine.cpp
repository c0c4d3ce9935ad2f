#include "engine/engine.h"

#include "config/config_keys.h"

#include "engine/reload_plan.h"

#include "audiod/audiod.h"
#include "log.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>

namespace audiod {

namespace {

void host_log(int level, const char* component, const char* message) {
    log_message(static_cast<LogLevel>(std::clamp(level, 0, 3)), component ? component : "module",
                message ? message : "");
}

} // namespace

Engine::Engine(ServerConfig config, ModuleLoader& modules, AppStateStore& state)
    : config_(std::move(config))
    , modules_(modules)
    , state_(state)
    , devices_(config_, modules_, host_, announcer_)
    , gains_(streams_, devices_, commands_, state_, announcer_)
    , router_(devices_, streams_, commands_, gains_, state_, announcer_, config_)
    , relays_(*this, devices_, state_, config_)
    , groups_(relays_, devices_)
    , discovered_(lifecycle_, devices_)
    , lifecycle_(devices_, streams_, router_, gains_, relays_, discovered_, announcer_)
    , watchdog_(devices_, announcer_)
    , status_(devices_, streams_, relays_, groups_, state_, announcer_, config_) {
    host_.abi_version = AUDIOD_MODULE_ABI_VERSION;
    host_.log = host_log;
    host_.request_source = DiscoveredSources::request;
    host_.server = &discovered_;
    take_app_rules();
}

Engine::~Engine() {
    stop();
}

void Engine::take_app_rules() {
    std::map<std::string, AppSettings> rules;
    for (const AppRule& rule : config_.apps) {
        rules[rule.app] = {rule.volume.value_or(1.0f), rule.muted.value_or(false), rule.sink};
    }
    state_.set_rules(std::move(rules));
}

Status Engine::start() {
    for (const DeviceConfig& sink : config_.sinks) {
        auto opened = devices_.open(sink.type, sink.name, sink.options, DeviceKind::sink);
        if (auto* error = std::get_if<std::string>(&opened)) {
            return Status::failure("sink '" + sink.name + "': " + *error);
        }
        lifecycle_.add(std::move(std::get<std::unique_ptr<Device>>(opened)), sink.type,
                       sink.options);
    }
    std::vector<std::pair<Device*, RelayRequest>> to_relay;
    for (const DeviceConfig& source : config_.sources) {
        OptionList options = source.options;
        auto relay = take_relay_request(options);
        if (auto* error = std::get_if<std::string>(&relay)) {
            return Status::failure("source '" + source.name + "': " + *error);
        }
        auto opened = devices_.open(source.type, source.name, options, DeviceKind::source);
        if (auto* error = std::get_if<std::string>(&opened)) {
            return Status::failure("source '" + source.name + "': " + *error);
        }
        const bool finds = finds_sources(options);
        DeviceRegistry::Entry& added = lifecycle_.add(
            std::move(std::get<std::unique_ptr<Device>>(opened)), source.type, std::move(options));
        if (finds) {
            added.passes_on = std::get<RelayRequest>(relay);
        } else if (!std::get<RelayRequest>(relay).sink.empty()) {
            to_relay.emplace_back(added.device.get(), std::get<RelayRequest>(relay));
        }
    }
    // A default chosen at run time (set-default-sink) outlives restarts.
    const std::string& chosen = state_.default_sink();
    devices_.set_default(
        !chosen.empty() && devices_.find_sink(chosen) != nullptr ? chosen : config_.default_sink);
    devices_.set_default_source(wanted_default_source());
    for (const auto& [source, request] : to_relay) {
        if (const Status relaying = relays_.start(*source, request); !relaying.ok()) {
            return Status::failure("source '" + source->name() + "': " + relaying.reason());
        }
    }
    if (const std::vector<std::string> errors = groups_.configure(config_.groups);
        !errors.empty()) {
        return Status::failure(errors.front());
    }
    status_.mark_started();
    return Status::success();
}

void Engine::stop() {
    // Relays first: their threads use streams that are about to go.
    relays_.clear();
    for (const auto& entry : devices_.entries()) {
        entry->device->stop();
    }
    // No RT thread runs now, so every stream is ours alone.
    streams_.clear();
    commands_.clear();
    devices_.clear();
    if (std::optional<std::string> text = state_.take_all_text()) {
        state_writer_.submit(state_.path(), std::move(*text));
    }
    if (!state_writer_.flush(StateFileWriter::kStopWait)) {
        log_error("engine", "the state file " + state_.path() + " is still being written after " +
                                std::to_string(StateFileWriter::kStopWait.count()) +
                                " s (a slow disk); stopping without waiting for it");
    } else if (const std::string failure = state_writer_.take_failure(); !failure.empty()) {
        log_error("engine", failure);
    }
}

std::variant<Stream*, ClientError> Engine::create_stream(const StreamRequest& request) {
    auto placed = router_.place(request);
    if (auto* error = std::get_if<ClientError>(&placed)) {
        return *error;
    }
    auto made =
        streams_.make(request, std::move(std::get<Placement>(placed)),
                      devices_.largest_cycle(request.params.rate), config_.client_memory_mb);
    if (auto* error = std::get_if<ClientError>(&made)) {
        return *error;
    }
    std::unique_ptr<Stream>& stream = std::get<std::unique_ptr<Stream>>(made);
    state_.mark_seen_now(stream->app);
    if (MaybeError error = router_.attach_new(*stream)) {
        return *error;
    }
    Stream& added = streams_.add(std::move(stream));
    log_info("engine", "stream created id=" + std::to_string(added.id) + " app=" + added.app +
                           (added.record ? " source=" : " sink=") + endpoint_name(added) +
                           " format=" + std::string(format_name(added.format)) +
                           " buffer=" + std::to_string(added.ring.capacity()));
    announcer_.stream_event("stream-added", added);
    return &added;
}

MaybeError Engine::load_device(DeviceKind kind, const std::string& type, const std::string& name,
                               const OptionList& options) {
    if (kind == DeviceKind::sink && type == "group") {
        return create_group(name, options);
    }
    if (MaybeError error = lifecycle_.load(kind, type, name, options)) {
        return error;
    }
    // A group's sink or member back: its members play again.
    for (const std::string& error : groups_.sync()) {
        log_warning("engine", error);
    }
    return std::nullopt;
}

MaybeError Engine::create_group(const std::string& name, const OptionList& options) {
    // As [groups.NAME] reads it: the rtp sink's options, the link offset,
    // and silence sent through unless asked otherwise.
    if (groups_.find(name) != nullptr) {
        return ClientError{AUDIOD_E_INVALID, "there is already a group named '" + name + "'"};
    }
    GroupConfig group;
    group.name = name;
    OptionList sink_options;
    const ConfigKey& offset = config_key("groups.NAME", "link-offset-ms");
    for (const auto& [key, value] : options) {
        if (key == "link-offset-ms") {
            uint32_t ms = 0;
            const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
            if (ec != std::errc{} || end != value.data() + value.size() || ms < offset.min ||
                ms > offset.max) {
                return ClientError{AUDIOD_E_INVALID, "link-offset-ms: '" + value +
                                                         "' is not a whole number of " +
                                                         std::to_string(offset.min) + " to " +
                                                         std::to_string(offset.max) + " ms"};
            }
            group.link_offset_ms = ms;
        } else if (key == "local" || key == "type") {
            return ClientError{AUDIOD_E_INVALID,
                               key + ": a group made at run time is an rtp sink (its options "
                                     "are the sink's); add members with group-add"};
        } else {
            sink_options.emplace_back(key, value);
        }
    }
    if (std::none_of(sink_options.begin(), sink_options.end(),
                     [](const auto& option) { return option.first == "suppress-silence"; })) {
        sink_options.emplace_back("suppress-silence", "false");
    }
    if (MaybeError error = lifecycle_.load(DeviceKind::sink, "rtp", name, sink_options)) {
        return error;
    }
    return groups_.create(group);
}

MaybeError Engine::control_group_room(const std::string& group, const std::string& room,
                                      const GroupRoomRequest& request) {
    if (groups_.find(group) == nullptr) {
        return ClientError{AUDIOD_E_NOENTITY, "no group named '" + group + "'"};
    }
    Device* sink = devices_.find_sink(group);
    if (sink == nullptr) {
        return ClientError{AUDIOD_E_NOENTITY, "group '" + group + "' has no sink loaded"};
    }
    if (room.find_first_of("\n=") != std::string::npos) {
        // (The sink takes one request a line: a name must not add a line.)
        return ClientError{AUDIOD_E_INVALID, "'" + room + "' is not a room's name"};
    }
    std::string text = "room=" + room + "\n";
    if (request.reset) {
        text += "reset=yes\n";
    }
    if (request.volume) {
        char volume[32];
        std::snprintf(volume, sizeof volume, "volume=%.6f\n", *request.volume);
        text += volume;
    }
    if (request.muted) {
        text += *request.muted ? "mute=on\n" : "mute=off\n";
    }
    if (request.delay_ms) {
        text += *request.delay_ms < 0 ? std::string("delay-ms=own\n")
                                      : "delay-ms=" + std::to_string(*request.delay_ms) + "\n";
    }
    if (std::string why = sink->control(text); !why.empty()) {
        return ClientError{AUDIOD_E_INVALID, "group '" + group + "': " + why};
    }
    return std::nullopt;
}

MaybeError Engine::unload_device(DeviceKind kind, const std::string& name) {
    if (MaybeError error = lifecycle_.unload(kind, name)) {
        return error;
    }
    // A group made at run time goes with its sink; a configured one waits
    // for its sink to come back.
    if (kind == DeviceKind::sink && groups_.made_at_run_time(name)) {
        groups_.remove(name);
    }
    return std::nullopt;
}

std::string Engine::why_not_running(const Device& device) const {
    const DeviceRegistry::Entry* entry = devices_.entry_of(device);
    return entry != nullptr && entry->suspended ? "is suspended (resume it first)" : "has failed";
}

MaybeError Engine::set_default_sink(const std::string& name) {
    Device* sink = devices_.find_sink(name);
    if (sink == nullptr) {
        return ClientError{AUDIOD_E_NOENTITY, "no sink named '" + name + "'"};
    }
    if (sink->failed()) {
        return ClientError{AUDIOD_E_BUSY, "sink '" + name + "' " + why_not_running(*sink)};
    }
    state_.set_default_sink(name);
    devices_.change_default(name);
    return std::nullopt;
}

MaybeError Engine::suspend_device(const std::string& name, bool suspended) {
    const DeviceKind kind =
        devices_.find(name, DeviceKind::source) != nullptr ? DeviceKind::source : DeviceKind::sink;
    if (kind == DeviceKind::sink && devices_.find_sink(name) == nullptr) {
        return ClientError{AUDIOD_E_NOENTITY, "no sink or source named '" + name + "'"};
    }
    return lifecycle_.suspend(kind, name, suspended);
}

MaybeError Engine::set_default_source(const std::string& name) {
    std::string recorded;
    const Device* source = name.empty() ? nullptr : devices_.find_recordable(name, &recorded);
    if (source == nullptr) {
        return ClientError{AUDIOD_E_NOENTITY,
                           "no source named '" + name + "' (a capture source or SINK.monitor)"};
    }
    if (source->failed()) {
        return ClientError{AUDIOD_E_BUSY, "source '" + name + "' " + why_not_running(*source)};
    }
    state_.set_default_source(name);
    devices_.change_default_source(name);
    return std::nullopt;
}

std::string Engine::wanted_default_source() const {
    const std::string& chosen = state_.default_source();
    std::string recorded;
    return !chosen.empty() && devices_.find_recordable(chosen, &recorded) != nullptr
               ? chosen
               : config_.default_source;
}

std::variant<std::string, ClientError> Engine::reload(ServerConfig next) {
    ReloadContext context;
    context.runs = [&](const std::string& name, DeviceKind kind) {
        return devices_.find(name, kind) != nullptr;
    };
    context.type_error = [&](const std::string& type) {
        const auto loaded = modules_.load(type);
        const auto* error = std::get_if<std::string>(&loaded);
        return error != nullptr ? *error : std::string();
    };
    auto planned = plan_reload(config_, next, context);
    if (auto* refused = std::get_if<ClientError>(&planned)) {
        return *refused;
    }
    const ReloadPlan& plan = std::get<ReloadPlan>(planned);

    // From here on the configuration is the new one; what fails now is a
    // device, not the file, and is reported while the rest goes on. The
    // plan points into both configurations: moving the vectors keeps every
    // element where it is, and `previous` keeps the old ones.
    const ServerConfig previous = std::exchange(config_, std::move(next));
    take_app_rules();
    gains_.apply_all();

    std::vector<std::string> done;
    std::vector<std::string> errors;
    const auto where = [&](const ReloadPlan::Step& step) {
        return config_.source + ":" + std::to_string(step.device->line);
    };
    const auto note = [&](const char* what, const ReloadPlan::Step& step) {
        done.push_back(std::string(what) +
                       (step.kind == DeviceKind::source ? " source " : " sink ") +
                       step.device->name);
    };
    for (const ReloadPlan::Step& step : plan.opening) {
        if (MaybeError error = lifecycle_.load(step.kind, step.device->type, step.device->name,
                                               step.device->options)) {
            errors.push_back(where(step) + ": " + error->message);
        } else {
            note("opened", step);
        }
    }
    for (const ReloadPlan::Step& step : plan.reopening) {
        if (const Status reopened = lifecycle_.reopen(*step.device, step.kind); !reopened.ok()) {
            errors.push_back(where(step) + ": " + reopened.reason());
        } else {
            note("reopened", step);
        }
    }
    // The configured default, unless one chosen at run time is here.
    const std::string& chosen = state_.default_sink();
    const std::string wanted_default =
        !chosen.empty() && devices_.find_sink(chosen) != nullptr ? chosen : config_.default_sink;
    if (devices_.find_sink(wanted_default) != nullptr && devices_.change_default(wanted_default)) {
        done.push_back("default sink " + wanted_default);
    }
    if (const std::string source = wanted_default_source();
        devices_.change_default_source(source)) {
        done.push_back("default source " +
                       (source.empty() ? "(the default sink's monitor)" : source));
    }
    // Closed last, so that their streams go to the new default sink.
    for (const ReloadPlan::Step& step : plan.closing) {
        if (MaybeError error = lifecycle_.unload(step.kind, step.device->name)) {
            errors.push_back(error->message);
        } else {
            note("closed", step);
        }
    }
    for (std::string& error : groups_.configure(config_.groups)) {
        errors.push_back(std::move(error));
    }
    std::string summary = "reloaded " + config_.source;
    summary += done.empty() ? ": no sink or source changed" : ": ";
    for (size_t i = 0; i < done.size(); ++i) {
        summary += (i == 0 ? "" : ", ") + done[i];
    }
    for (const std::string& error : errors) {
        summary += "\nerror: " + error;
    }
    (errors.empty() ? log_info : log_warning)("engine", summary);
    return summary;
}

void Engine::handle_events(int fd) {
    Device* device = devices_.by_event_fd(fd);
    if (device == nullptr) {
        return;
    }
    RtEvent events[64];
    size_t count = 0;
    do {
        count = device->take_events(events, std::size(events));
        for (size_t i = 0; i < count; ++i) {
            const RtEvent& event = events[i];
            switch (event.kind) {
            case RtEvent::Kind::detached:
                router_.handed_back(*event.stream);
                break;
            case RtEvent::Kind::broken: {
                Stream& stream = *event.stream;
                const uint32_t client = stream.client_id;
                log_warning("engine", "stream " + std::to_string(stream.id) +
                                          " corrupted its ring positions; dropping client " +
                                          std::to_string(client));
                // The RT thread no longer mixes it, but commands for it may
                // still sit in the queue: free it only on the `detached`
                // that follows them.
                router_.close(stream);
                announcer_.client_fault(client, "corrupted its stream's ring positions");
                break;
            }
            case RtEvent::Kind::device_failed:
                lifecycle_.failed(*device, event.value);
                return; // the device's streams have moved; its queue is done
            }
        }
    } while (count == std::size(events));
}

void Engine::tick() {
    const auto now = std::chrono::steady_clock::now();
    commands_.retry();
    const RtWatchdog::Findings findings = watchdog_.check(now);
    for (Device* recovered : findings.recovered) {
        router_.bring_back(*recovered); // those created elsewhere while it stalled
    }
    for (Device* abandoned : findings.abandoned) {
        lifecycle_.announce_failure(*abandoned);
    }
    lifecycle_.reopen_failed(now);
    discovered_.handle();
    status_.announce_changes();
    sync_watch_.check(relays_, announcer_);
    relays_.tell_sources();
    save_state();
}

void Engine::save_state() {
    if (const std::string failure = state_writer_.take_failure(); !failure.empty()) {
        log_warning("engine", failure);
        state_.mark_dirty(); // taken again below
    }
    if (std::optional<std::string> text = state_.take_text()) {
        state_writer_.submit(state_.path(), std::move(*text));
    }
}

} // namespace audiod

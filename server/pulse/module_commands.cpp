// The pulse server's LOAD_MODULE, UNLOAD_MODULE and module introspection:
// module-null-sink is an audiod null sink loaded as `audioctl load-sink`
// loads one; every other module is refused with NOENTITY, as libpulse
// expects of a module that does not exist, and the server log says why.
#include "engine/engine.h"
#include "log.h"
#include "pulse/engine_errors.h"
#include "pulse/pulse_server.h"

#include <algorithm>

namespace audiod::pulse {

bool PulseServer::on_module_command(Connection& connection, Command command, uint32_t tag,
                                    TagReader& fields) {
    std::string name;
    std::optional<std::string> argument;
    uint32_t index = kInvalidIndex;
    switch (command) {
    case Command::load_module:
        fields.get_string(name);
        fields.get_string(argument);
        break;
    case Command::unload_module:
    case Command::get_module_info:
        fields.get_u32(index);
        break;
    case Command::get_module_info_list:
        break;
    default:
        return false;
    }
    Session& session = *connection.session;
    if (!fields.done()) {
        session.reply_error(tag, Error::protocol);
        return true;
    }
    // Sinks are every user's: on a shared server, an admin's to add.
    if ((command == Command::load_module || command == Command::unload_module) &&
        !connection.admin) {
        session.reply_error(tag, Error::access);
        return true;
    }
    const uint32_t id = connection.id;
    switch (command) {
    case Command::load_module:
        load_module(connection, tag, name, argument.value_or(""));
        return true;
    case Command::unload_module: {
        const PulseModule* module = modules_.find(index);
        if (module == nullptr) {
            session.reply_error(tag, Error::noentity);
            return true;
        }
        const std::string sink = module->sink;
        post_job([this, id, tag, index, sink](Engine& engine) {
            const MaybeError failed = engine.unload_device(DeviceKind::sink, sink);
            return EngineGateway::Answer([this, id, tag, index, failed] {
                if (!failed) {
                    forget_module(index);
                }
                with_connection(id, [&](Connection& c) {
                    failed ? c.session->reply_error(tag, pulse_error(failed->code))
                           : c.session->reply(tag);
                });
            });
        });
        return true;
    }
    default: {
        // The streams on each module's sink, for its use count.
        if (command == Command::get_module_info && modules_.find(index) == nullptr) {
            session.reply_error(tag, Error::noentity);
            return true;
        }
        post_job([this, id, tag, index](Engine& engine) {
            auto streams = std::make_shared<std::vector<proto::StreamInfo>>(engine.list_streams());
            return EngineGateway::Answer([this, id, tag, index, streams] {
                with_connection(id, [&](Connection& c) {
                    TagWriter w;
                    for (const auto& [at, module] : modules_.all()) {
                        if (index != kInvalidIndex && at != index) {
                            continue;
                        }
                        const auto used = std::count_if(
                            streams->begin(), streams->end(),
                            [&](const proto::StreamInfo& s) { return s.device == module.sink; });
                        put_module(w, module, static_cast<uint32_t>(used), c.session->version());
                    }
                    if (index != kInvalidIndex && modules_.find(index) == nullptr) {
                        c.session->reply_error(tag, Error::noentity); // unloaded meanwhile
                        return;
                    }
                    c.session->reply(tag, w);
                });
            });
        });
        return true;
    }
    }
}

void PulseServer::load_module(Connection& connection, uint32_t tag, const std::string& name,
                              const std::string& argument) {
    Session& session = *connection.session;
    if (name != kNullSinkModule) {
        log_info("pulse", engine_app(connection) + " asked for " + name +
                              ", which audiod does not have (it loads module-null-sink only)");
        session.reply_error(tag, Error::noentity);
        return;
    }
    auto planned = plan_null_sink(argument);
    if (const auto* refused = std::get_if<std::string>(&planned)) {
        log_info("pulse", "module-null-sink refused: " + *refused);
        session.reply_error(tag, Error::modinitfailed);
        return;
    }
    const uint32_t id = connection.id;
    post_job(
        [this, id, tag, name, argument, plan = std::get<NullSinkPlan>(planned)](Engine& engine) {
            const MaybeError failed =
                engine.load_device(DeviceKind::sink, "null", plan.name, plan.options);
            return EngineGateway::Answer([this, id, tag, name, argument, plan, failed] {
                if (failed) {
                    log_info("pulse", "module-null-sink refused: " + failed->message);
                    with_connection(id, [&](Connection& c) {
                        c.session->reply_error(tag, Error::modinitfailed);
                    });
                    return;
                }
                const uint32_t index = modules_.add(name, argument, plan.name, plan.description);
                notify(SubscriptionEvent{Facility::module, Happened::added, index});
                with_connection(
                    id, [&](Connection& c) { c.session->reply(tag, TagWriter().put_u32(index)); });
            });
        });
}

void PulseServer::forget_module(uint32_t index) {
    const PulseModule* module = modules_.find(index);
    if (module != nullptr && modules_.forget_sink(module->sink)) {
        notify(SubscriptionEvent{Facility::module, Happened::removed, index});
    }
}

} // namespace audiod::pulse

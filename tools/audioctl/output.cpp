#include "output.h"

#include "common/json_writer.h"
#include "protocol/sample_format.h"
#include "protocol/socket_path.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>

namespace audiod::ctl {

namespace {

std::string percent(float volume) {
    char text[32];
    std::snprintf(text, sizeof text, "%.0f%%", static_cast<double>(volume) * 100.0);
    return text;
}

std::string yes_no(bool value) {
    return value ? "yes" : "no";
}

std::string milliseconds(uint32_t frames, uint32_t rate) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f ms", rate != 0 ? 1000.0 * frames / rate : 0.0);
    return text;
}

// A module's "key=value" lines (SinkInfo::details), in order.
std::vector<std::pair<std::string, std::string>> detail_pairs(const std::string& details) {
    std::vector<std::pair<std::string, std::string>> out;
    size_t at = 0;
    while (at < details.size()) {
        size_t end = details.find('\n', at);
        if (end == std::string::npos) {
            end = details.size();
        }
        const std::string line = details.substr(at, end - at);
        at = end + 1;
        const size_t equals = line.find('=');
        if (equals != std::string::npos && equals > 0) {
            out.emplace_back(line.substr(0, equals), line.substr(equals + 1));
        }
    }
    return out;
}

// Under a table, one line per item that has details: "NAME: k=v k=v".
template <class Info>
std::string details_text(const std::vector<Info>& items) {
    std::string out;
    for (const Info& item : items) {
        const auto pairs = detail_pairs(item.details);
        if (pairs.empty()) {
            continue;
        }
        out += item.name + ":";
        for (const auto& [k, v] : pairs) {
            out += " " + k + "=" + v;
        }
        out += "\n";
    }
    return out.empty() ? out : "\n" + out;
}

// ---- text: a table of columns, each a header and how to show a cell ------

template <class Info>
struct Column {
    const char* header;
    std::function<std::string(const Info&)> cell;
};

// Renders the rows as columns separated by two spaces, each as wide as its
// widest cell.
template <class Info>
std::string table(const std::vector<Column<Info>>& columns, const std::vector<Info>& items) {
    std::vector<std::vector<std::string>> rows(1);
    for (const auto& column : columns) {
        rows[0].push_back(column.header);
    }
    for (const Info& item : items) {
        rows.emplace_back();
        for (const auto& column : columns) {
            rows.back().push_back(column.cell(item));
        }
    }
    std::vector<size_t> widths(columns.size(), 0);
    for (const auto& row : rows) {
        for (size_t i = 0; i < row.size(); ++i) {
            widths[i] = std::max(widths[i], row[i].size());
        }
    }
    std::string out;
    for (const auto& row : rows) {
        for (size_t i = 0; i < row.size(); ++i) {
            out += row[i];
            if (i + 1 < row.size()) {
                out.append(widths[i] - row[i].size() + 2, ' ');
            }
        }
        out += "\n";
    }
    return out;
}

const std::vector<Column<proto::SinkInfo>> kSinkColumns = {
    {"NAME", [](const auto& s) { return s.name + (s.is_default ? " *" : ""); }},
    {"TYPE", [](const auto& s) { return s.type; }},
    {"STATE", [](const auto& s) { return s.state; }},
    {"RATE", [](const auto& s) { return std::to_string(s.rate); }},
    {"CH", [](const auto& s) { return std::to_string(s.channels); }},
    {"QUANTUM", [](const auto& s) { return std::to_string(s.quantum); }},
    {"LATENCY", [](const auto& s) { return milliseconds(s.latency_frames, s.rate); }},
    {"FORMAT",
     [](const auto& s) { return std::string(format_name(static_cast<SampleFormat>(s.format))); }},
    {"VOLUME", [](const auto& s) { return percent(s.volume); }},
    {"MUTED", [](const auto& s) { return yes_no(s.muted); }},
    {"STREAMS", [](const auto& s) { return std::to_string(s.streams); }},
    {"XRUNS", [](const auto& s) { return std::to_string(s.xruns); }},
};

const std::vector<Column<proto::StreamInfo>> kStreamColumns = {
    {"ID", [](const auto& s) { return std::to_string(s.id); }},
    {"APP", [](const auto& s) { return s.app; }},
    {"DEVICE", [](const auto& s) { return s.device; }},
    {"STATE", [](const auto& s) { return s.state; }},
    {"VOLUME", [](const auto& s) { return percent(s.volume); }},
    {"MUTED", [](const auto& s) { return yes_no(s.muted); }},
    {"XRUNS", [](const auto& s) { return std::to_string(s.xruns); }},
    {"FORMAT",
     [](const auto& s) { return std::string(format_name(static_cast<SampleFormat>(s.format))); }},
    {"RATE", [](const auto& s) { return std::to_string(s.rate); }},
    {"CH", [](const auto& s) { return std::to_string(s.channels); }},
    {"PID", [](const auto& s) { return std::to_string(s.pid); }},
};

const std::vector<Column<proto::ClientInfo>> kClientColumns = {
    {"ID", [](const auto& c) { return std::to_string(c.id); }},
    {"PID", [](const auto& c) { return std::to_string(c.pid); }},
    {"EXECUTABLE", [](const auto& c) { return c.executable; }},
    {"APP", [](const auto& c) { return c.app; }},
    {"STREAMS",
     [](const auto& c) {
         std::string ids;
         for (const uint32_t id : c.streams) {
             if (!ids.empty()) {
                 ids += ',';
             }
             ids += std::to_string(id);
         }
         return ids.empty() ? std::string("-") : ids;
     }},
};

// When an application last played, in local time to the minute.
std::string last_played(const proto::AppInfo& app) {
    if (app.streams > 0) {
        return "now";
    }
    if (app.last_seen == 0) {
        return "never";
    }
    const auto when = static_cast<time_t>(app.last_seen);
    tm local{};
    char text[32];
    if (::localtime_r(&when, &local) == nullptr ||
        std::strftime(text, sizeof text, "%Y-%m-%d %H:%M", &local) == 0) {
        return "?";
    }
    return text;
}

const std::vector<Column<proto::AppInfo>> kAppColumns = {
    {"APP", [](const auto& a) { return a.name; }},
    {"VOLUME", [](const auto& a) { return percent(a.volume); }},
    {"MUTED", [](const auto& a) { return yes_no(a.muted); }},
    {"SINK", [](const auto& a) { return a.sink.empty() ? std::string("(default)") : a.sink; }},
    {"STREAMS", [](const auto& a) { return std::to_string(a.streams); }},
    {"SETTINGS",
     [](const auto& a) {
         return std::string(a.remembered ? "set" : a.rule ? "rule" : "default");
     }},
    {"LAST PLAYED", [](const auto& a) { return last_played(a); }},
};

const std::vector<Column<proto::SourceInfo>> kSourceColumns = {
    {"NAME", [](const auto& s) { return s.name + (s.is_default ? " *" : ""); }},
    {"TYPE", [](const auto& s) { return s.type; }},
    {"SINK", [](const auto& s) { return s.sink.empty() ? std::string("-") : s.sink; }},
    {"STATE", [](const auto& s) { return s.state; }},
    {"RATE", [](const auto& s) { return std::to_string(s.rate); }},
    {"CH", [](const auto& s) { return std::to_string(s.channels); }},
    {"LATENCY", [](const auto& s) { return milliseconds(s.latency_frames, s.rate); }},
    {"STREAMS", [](const auto& s) { return std::to_string(s.streams); }},
    {"XRUNS", [](const auto& s) { return std::to_string(s.xruns); }},
    // A monitor's level is its sink's.
    {"VOLUME",
     [](const auto& s) { return s.type == "monitor" ? std::string("-") : percent(s.volume); }},
    {"MUTED",
     [](const auto& s) { return s.type == "monitor" ? std::string("-") : yes_no(s.muted); }},
};

// ---- JSON: the fields as messages.h names them ---------------------------

// A visitor for proto::visit that writes each field as a JSON member under
// its name, so the JSON keys are the protocol's field names and no field
// is written twice.
class JsonFields {
public:
    explicit JsonFields(JsonWriter& w)
        : w_(w) {}

    void u32(const char* key, uint32_t value) { member(key, uint64_t{value}); }
    void u32(uint32_t value) { w_.value(uint64_t{value}); } // a list item
    void u64(const char* key, uint64_t value) { member(key, value); }
    void i32(const char* key, int32_t value) { member(key, int64_t{value}); }
    void f32(const char* key, float value) { member(key, static_cast<double>(value)); }
    void boolean(const char* key, bool value) { member(key, value); }
    void str(const char* key, const std::string& value) { member(key, value); }
    // The module's details as an object (none: no member); values that are
    // numbers are written as numbers.
    void details(const char* key, const std::string& value) {
        if (value.empty()) {
            return;
        }
        w_.key(key);
        w_.begin_object();
        for (const auto& [k, v] : detail_pairs(value)) {
            w_.key(k);
            char* end = nullptr;
            const double number = std::strtod(v.c_str(), &end);
            const bool numeric = !v.empty() && end == v.c_str() + v.size() &&
                                 v.find_first_not_of("0123456789.-") == std::string::npos;
            if (numeric && v.find('.') == std::string::npos && v[0] != '-') {
                w_.value(static_cast<uint64_t>(std::strtoull(v.c_str(), nullptr, 10)));
            } else if (numeric) {
                w_.value(number);
            } else {
                w_.value(v);
            }
        }
        w_.end_object();
    }
    void sample_format(const char* key, uint32_t value) {
        member(key, std::string(format_name(static_cast<SampleFormat>(value))));
    }
    void direction(const char* key, uint32_t value) {
        member(key, value == static_cast<uint32_t>(proto::StreamDirection::record)
                        ? std::string("record")
                        : std::string("playback"));
    }
    void u32_or_none(const char* key, uint32_t value) {
        if (value != 0) {
            u32(key, value);
        }
    }
    template <class T, class Visit>
    void list(const char* key, const std::vector<T>& items, Visit&& visit_item) {
        w_.key(key);
        w_.begin_array();
        for (const T& item : items) {
            visit_item(*this, item);
        }
        w_.end_array();
    }
    // An object of its own, saying what it is first ("kind": "sink").
    template <class M>
    void object(const M& message) {
        w_.begin_object();
        member("kind", std::string(kind_of(message)));
        proto::visit(*this, message);
        w_.end_object();
    }

private:
    template <class Value>
    void member(const char* key, const Value& value) {
        w_.key(key);
        w_.value(value);
    }
    static const char* kind_of(const proto::SinkInfo&) { return "sink"; }
    static const char* kind_of(const proto::StreamInfo&) { return "stream"; }
    static const char* kind_of(const proto::ClientInfo&) { return "client"; }
    static const char* kind_of(const proto::AppInfo&) { return "app"; }
    static const char* kind_of(const proto::SourceInfo&) { return "source"; }

    JsonWriter& w_;
};

template <class Info>
void write_objects(JsonFields& fields, const std::vector<Info>& items) {
    for (const Info& item : items) {
        fields.object(item);
    }
}

// A JSON array of objects, on one line.
template <class Info>
std::string json_array(const std::vector<Info>& items) {
    JsonWriter w;
    JsonFields fields(w);
    w.begin_array();
    write_objects(fields, items);
    w.end_array();
    return w.str() + "\n";
}

} // namespace

std::string sinks_text(const std::vector<proto::SinkInfo>& sinks) {
    return table(kSinkColumns, sinks) + details_text(sinks);
}

std::string streams_text(const std::vector<proto::StreamInfo>& streams) {
    return streams.empty() ? "no streams\n" : table(kStreamColumns, streams);
}

std::string clients_text(const std::vector<proto::ClientInfo>& clients) {
    return table(kClientColumns, clients);
}

std::string apps_text(const std::vector<proto::AppInfo>& apps) {
    return table(kAppColumns, apps);
}

std::string sources_text(const std::vector<proto::SourceInfo>& sources) {
    return table(kSourceColumns, sources) + details_text(sources);
}

std::string info_text(const proto::ServerInfo& info, const std::vector<proto::SinkInfo>& sinks,
                      const std::string& socket) {
    char text[4096];
    std::snprintf(text, sizeof text,
                  "audiod %s (protocol %u, pid %u)\n"
                  "rate:         %u Hz, %u channels\n"
                  "quantum:      %u frames (%.2f ms)\n"
                  "scheduling:   %s\n"
                  "memory:       %s\n"
                  "socket:       %s\n"
                  "uptime:       %.1f s\n"
                  "default sink: %s\n"
                  "default source: %s\n"
                  "clients:      %u\nstreams:      %u\nsinks:        %u\n"
                  "state file:   %s\n",
                  info.version.c_str(), info.protocol, info.pid, info.rate, info.channels,
                  info.quantum, info.rate ? 1000.0 * info.quantum / info.rate : 0.0,
                  info.scheduling.c_str(), info.memory.c_str(),
                  (socket + (socket == kSystemSocketPath ? " (the system-wide server)"
                                                         : " (the user's server)"))
                      .c_str(),
                  static_cast<double>(info.uptime_ms) / 1000.0, info.default_sink.c_str(),
                  info.default_source.c_str(), info.clients, info.streams, info.sinks,
                  info.state_file.empty() ? "(none)" : info.state_file.c_str());
    std::string out = text;
    for (const auto& s : sinks) {
        out += "  " + s.name + " (" + s.type + (s.is_default ? ", default" : "") + ", " + s.state +
               ", " + s.scheduling + ")\n";
    }
    return out;
}

std::string sinks_json(const std::vector<proto::SinkInfo>& sinks) {
    return json_array(sinks);
}

std::string streams_json(const std::vector<proto::StreamInfo>& streams) {
    return json_array(streams);
}

std::string clients_json(const std::vector<proto::ClientInfo>& clients) {
    return json_array(clients);
}

std::string apps_json(const std::vector<proto::AppInfo>& apps) {
    return json_array(apps);
}

std::string sources_json(const std::vector<proto::SourceInfo>& sources) {
    return json_array(sources);
}

std::string all_json(const std::vector<proto::SinkInfo>& sinks,
                     const std::vector<proto::StreamInfo>& streams) {
    JsonWriter w;
    JsonFields fields(w);
    w.begin_array();
    write_objects(fields, sinks);
    write_objects(fields, streams);
    w.end_array();
    return w.str() + "\n";
}

std::string info_json(const proto::ServerInfo& info, const std::vector<proto::SinkInfo>& sinks,
                      const std::string& socket) {
    JsonWriter w;
    JsonFields fields(w);
    w.begin_object();
    w.key("socket");
    w.value(std::string_view(socket));
    w.key("system");
    w.value(socket == kSystemSocketPath);
    proto::visit(fields, info);
    w.key("sinks");
    w.begin_array();
    write_objects(fields, sinks);
    w.end_array();
    w.end_object();
    return w.str() + "\n";
}

std::string event_text(const proto::Event& e) {
    std::string line = e.kind;
    if (e.stream_id != 0) {
        line += " stream=" + std::to_string(e.stream_id);
    }
    if (!e.app.empty()) {
        line += " app=" + e.app;
    }
    if (!e.device.empty()) {
        line += " device=" + e.device;
    }
    if (!e.previous_device.empty()) {
        line += " from=" + e.previous_device;
    }
    if (!e.state.empty()) {
        line += " state=" + e.state;
    }
    if (e.kind.find("changed") != std::string::npos && !e.kind.starts_with("default-")) {
        line += " volume=" + percent(e.volume) + (e.muted ? " muted" : "");
    }
    return line + "\n";
}

std::string event_json(const proto::Event& e) {
    JsonWriter w;
    JsonFields fields(w);
    w.begin_object();
    proto::visit(fields, e);
    w.end_object();
    return w.str() + "\n";
}

} // namespace audiod::ctl

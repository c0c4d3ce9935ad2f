#include "output.h"

#include "common/json_writer.h"
#include "protocol/sample_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace audiod::ctl {

namespace {

std::string percent(float volume) {
    char text[32];
    std::snprintf(text, sizeof text, "%.0f%%", static_cast<double>(volume) * 100.0);
    return text;
}

std::string format_of(uint32_t raw) {
    return std::string(format_name(static_cast<SampleFormat>(raw)));
}

// Renders rows as columns separated by two spaces, each as wide as its widest cell.
std::string table(const std::vector<std::vector<std::string>>& rows) {
    std::vector<size_t> widths;
    for (const auto& row : rows) {
        widths.resize(std::max(widths.size(), row.size()));
        for (size_t i = 0; i < row.size(); ++i) {
            widths[i] = std::max(widths[i], row[i].size());
        }
    }
    std::string out;
    for (const auto& row : rows) {
        std::string line;
        for (size_t i = 0; i < row.size(); ++i) {
            line += row[i];
            if (i + 1 < row.size()) {
                line.append(widths[i] - row[i].size() + 2, ' ');
            }
        }
        out += line + "\n";
    }
    return out;
}

void write_sink(JsonWriter& w, const proto::SinkInfo& s) {
    w.begin_object();
    w.key("kind");
    w.value("sink");
    w.key("name");
    w.value(s.name);
    w.key("type");
    w.value(s.type);
    w.key("state");
    w.value(s.state);
    w.key("rate");
    w.value(uint64_t{s.rate});
    w.key("channels");
    w.value(uint64_t{s.channels});
    w.key("quantum");
    w.value(uint64_t{s.quantum});
    w.key("format");
    w.value(format_of(s.format));
    w.key("volume");
    w.value(static_cast<double>(s.volume));
    w.key("muted");
    w.value(s.muted);
    w.key("default");
    w.value(s.is_default);
    w.key("streams");
    w.value(uint64_t{s.streams});
    w.key("frames");
    w.value(s.frames);
    w.key("xruns");
    w.value(s.xruns);
    w.key("scheduling");
    w.value(s.scheduling);
    w.key("latency_frames");
    w.value(uint64_t{s.latency_frames});
    w.end_object();
}

void write_stream(JsonWriter& w, const proto::StreamInfo& s) {
    w.begin_object();
    w.key("kind");
    w.value("stream");
    w.key("id");
    w.value(uint64_t{s.id});
    w.key("app");
    w.value(s.app);
    w.key("sink");
    w.value(s.sink);
    w.key("state");
    w.value(s.state);
    w.key("volume");
    w.value(static_cast<double>(s.volume));
    w.key("muted");
    w.value(s.muted);
    w.key("underruns");
    w.value(s.xruns);
    w.key("format");
    w.value(format_of(s.format));
    w.key("rate");
    w.value(uint64_t{s.rate});
    w.key("channels");
    w.value(uint64_t{s.channels});
    w.key("client");
    w.value(uint64_t{s.client_id});
    w.key("pid");
    w.value(uint64_t{s.pid});
    w.key("buffer_frames");
    w.value(s.buffer_frames);
    w.key("position");
    w.value(s.position);
    w.key("direction");
    w.value(s.direction == static_cast<uint32_t>(proto::StreamDirection::record) ? "record"
                                                                                 : "playback");
    w.end_object();
}

} // namespace

std::string sinks_text(const std::vector<proto::SinkInfo>& sinks) {
    std::vector<std::vector<std::string>> rows{{"NAME", "TYPE", "STATE", "RATE", "CH", "QUANTUM",
                                                "LATENCY", "FORMAT", "VOLUME", "MUTED", "STREAMS",
                                                "XRUNS"}};
    for (const auto& s : sinks) {
        char latency[32];
        std::snprintf(latency, sizeof latency, "%.1f ms",
                      s.rate ? 1000.0 * s.latency_frames / s.rate : 0.0);
        rows.push_back({s.name + (s.is_default ? " *" : ""), s.type, s.state,
                        std::to_string(s.rate), std::to_string(s.channels),
                        std::to_string(s.quantum), latency, format_of(s.format), percent(s.volume),
                        s.muted ? "yes" : "no", std::to_string(s.streams),
                        std::to_string(s.xruns)});
    }
    return table(rows);
}

std::string streams_text(const std::vector<proto::StreamInfo>& streams) {
    if (streams.empty()) {
        return "no streams\n";
    }
    std::vector<std::vector<std::string>> rows{{"ID", "APP", "SINK", "STATE", "VOLUME", "MUTED",
                                                "UNDERRUNS", "FORMAT", "RATE", "CH", "PID"}};
    for (const auto& s : streams) {
        rows.push_back({std::to_string(s.id), s.app, s.sink, s.state, percent(s.volume),
                        s.muted ? "yes" : "no", std::to_string(s.xruns), format_of(s.format),
                        std::to_string(s.rate), std::to_string(s.channels), std::to_string(s.pid)});
    }
    return table(rows);
}

std::string info_text(const proto::ServerInfo& info, const std::vector<proto::SinkInfo>& sinks) {
    char text[1024];
    std::snprintf(text, sizeof text,
                  "audiod %s (protocol %u, pid %u)\n"
                  "rate:         %u Hz, %u channels\n"
                  "quantum:      %u frames (%.2f ms)\n"
                  "scheduling:   %s\n"
                  "memory:       %s\n"
                  "uptime:       %.1f s\n"
                  "default sink: %s\n"
                  "clients:      %u\nstreams:      %u\nsinks:        %u\n"
                  "state file:   %s\n",
                  info.version.c_str(), info.protocol, info.pid, info.rate, info.channels,
                  info.quantum, info.rate ? 1000.0 * info.quantum / info.rate : 0.0,
                  info.scheduling.c_str(), info.memory.c_str(),
                  static_cast<double>(info.uptime_ms) / 1000.0, info.default_sink.c_str(),
                  info.clients, info.streams, info.sinks,
                  info.state_file.empty() ? "(none)" : info.state_file.c_str());
    std::string out = text;
    for (const auto& s : sinks) {
        out += "  " + s.name + " (" + s.type + (s.is_default ? ", default" : "") + ", " + s.state +
               ", " + s.scheduling + ")\n";
    }
    return out;
}

std::string sinks_json(const std::vector<proto::SinkInfo>& sinks) {
    JsonWriter w;
    w.begin_array();
    for (const auto& s : sinks) {
        write_sink(w, s);
    }
    w.end_array();
    return w.str() + "\n";
}

std::string streams_json(const std::vector<proto::StreamInfo>& streams) {
    JsonWriter w;
    w.begin_array();
    for (const auto& s : streams) {
        write_stream(w, s);
    }
    w.end_array();
    return w.str() + "\n";
}

std::string all_json(const std::vector<proto::SinkInfo>& sinks,
                     const std::vector<proto::StreamInfo>& streams) {
    JsonWriter w;
    w.begin_array();
    for (const auto& s : sinks) {
        write_sink(w, s);
    }
    for (const auto& s : streams) {
        write_stream(w, s);
    }
    w.end_array();
    return w.str() + "\n";
}

std::string info_json(const proto::ServerInfo& info, const std::vector<proto::SinkInfo>& sinks) {
    JsonWriter w;
    w.begin_object();
    w.key("version");
    w.value(info.version);
    w.key("protocol");
    w.value(uint64_t{info.protocol});
    w.key("pid");
    w.value(uint64_t{info.pid});
    w.key("rate");
    w.value(uint64_t{info.rate});
    w.key("channels");
    w.value(uint64_t{info.channels});
    w.key("quantum");
    w.value(uint64_t{info.quantum});
    w.key("scheduling");
    w.value(info.scheduling);
    w.key("memory");
    w.value(info.memory);
    w.key("uptime_ms");
    w.value(info.uptime_ms);
    w.key("default_sink");
    w.value(info.default_sink);
    w.key("clients");
    w.value(uint64_t{info.clients});
    w.key("streams");
    w.value(uint64_t{info.streams});
    w.key("state_file");
    w.value(info.state_file);
    w.key("sinks");
    w.begin_array();
    for (const auto& s : sinks) {
        write_sink(w, s);
    }
    w.end_array();
    w.end_object();
    return w.str() + "\n";
}

std::string clients_text(const std::vector<proto::ClientInfo>& clients) {
    std::vector<std::vector<std::string>> rows{{"ID", "PID", "EXECUTABLE", "APP", "STREAMS"}};
    for (const auto& c : clients) {
        std::string streams;
        for (const uint32_t id : c.streams) {
            if (!streams.empty()) {
                streams += ',';
            }
            streams += std::to_string(id);
        }
        rows.push_back({std::to_string(c.id), std::to_string(c.pid), c.executable, c.app,
                        streams.empty() ? "-" : streams});
    }
    return table(rows);
}

std::string clients_json(const std::vector<proto::ClientInfo>& clients) {
    JsonWriter w;
    w.begin_array();
    for (const auto& c : clients) {
        w.begin_object();
        w.key("kind");
        w.value("client");
        w.key("id");
        w.value(uint64_t{c.id});
        w.key("pid");
        w.value(uint64_t{c.pid});
        w.key("executable");
        w.value(c.executable);
        w.key("app");
        w.value(c.app);
        w.key("streams");
        w.begin_array();
        for (const uint32_t id : c.streams) {
            w.value(uint64_t{id});
        }
        w.end_array();
        w.end_object();
    }
    w.end_array();
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
    if (!e.sink.empty()) {
        line += " sink=" + e.sink;
    }
    if (!e.previous_sink.empty()) {
        line += " from=" + e.previous_sink;
    }
    if (!e.state.empty()) {
        line += " state=" + e.state;
    }
    if (e.kind.find("changed") != std::string::npos && e.kind != "default-changed") {
        line += " volume=" + percent(e.volume) + (e.muted ? " muted" : "");
    }
    return line + "\n";
}

std::string event_json(const proto::Event& e) {
    JsonWriter w;
    w.begin_object();
    w.key("event");
    w.value(e.kind);
    if (e.stream_id != 0) {
        w.key("stream");
        w.value(uint64_t{e.stream_id});
    }
    w.key("app");
    w.value(e.app);
    w.key("sink");
    w.value(e.sink);
    w.key("previous_sink");
    w.value(e.previous_sink);
    w.key("state");
    w.value(e.state);
    w.key("volume");
    w.value(static_cast<double>(e.volume));
    w.key("muted");
    w.value(e.muted);
    w.end_object();
    return w.str() + "\n";
}

std::string apps_text(const std::vector<proto::AppInfo>& apps) {
    std::vector<std::vector<std::string>> rows{{"APP", "VOLUME", "MUTED", "SINK", "STREAMS"}};
    for (const auto& a : apps) {
        rows.push_back({a.name, percent(a.volume), a.muted ? "yes" : "no",
                        a.sink.empty() ? "(default)" : a.sink, std::to_string(a.streams)});
    }
    return table(rows);
}

std::string apps_json(const std::vector<proto::AppInfo>& apps) {
    JsonWriter w;
    w.begin_array();
    for (const auto& a : apps) {
        w.begin_object();
        w.key("kind");
        w.value("app");
        w.key("name");
        w.value(a.name);
        w.key("volume");
        w.value(static_cast<double>(a.volume));
        w.key("muted");
        w.value(a.muted);
        w.key("sink");
        w.value(a.sink);
        w.key("streams");
        w.value(uint64_t{a.streams});
        w.end_object();
    }
    w.end_array();
    return w.str() + "\n";
}

std::string sources_text(const std::vector<proto::SourceInfo>& sources) {
    std::vector<std::vector<std::string>> rows{
        {"NAME", "TYPE", "SINK", "STATE", "RATE", "CH", "LATENCY", "STREAMS", "XRUNS"}};
    for (const auto& s : sources) {
        char latency[32];
        std::snprintf(latency, sizeof latency, "%.1f ms",
                      s.rate == 0 ? 0.0 : 1000.0 * s.latency_frames / s.rate);
        rows.push_back({s.name, s.type, s.sink.empty() ? "-" : s.sink, s.state,
                        std::to_string(s.rate), std::to_string(s.channels), latency,
                        std::to_string(s.streams), std::to_string(s.xruns)});
    }
    return table(rows);
}

std::string sources_json(const std::vector<proto::SourceInfo>& sources) {
    JsonWriter w;
    w.begin_array();
    for (const auto& s : sources) {
        w.begin_object();
        w.key("kind");
        w.value("source");
        w.key("name");
        w.value(s.name);
        w.key("type");
        w.value(s.type);
        w.key("sink");
        w.value(s.sink);
        w.key("state");
        w.value(s.state);
        w.key("rate");
        w.value(uint64_t{s.rate});
        w.key("channels");
        w.value(uint64_t{s.channels});
        w.key("streams");
        w.value(uint64_t{s.streams});
        w.key("latency_frames");
        w.value(uint64_t{s.latency_frames});
        w.key("xruns");
        w.value(s.xruns);
        w.end_object();
    }
    w.end_array();
    return w.str() + "\n";
}

} // namespace audiod::ctl

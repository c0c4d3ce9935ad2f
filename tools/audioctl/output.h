// How audioctl prints what the server reports: aligned text tables for
// people, JSON for scripts.
#pragma once

#include "protocol/messages.h"

#include <string>
#include <vector>

namespace audiod::ctl {

std::string sinks_text(const std::vector<proto::SinkInfo>& sinks);
std::string streams_text(const std::vector<proto::StreamInfo>& streams);
// `socket`: the one audioctl reached (the user's or the system-wide server).
std::string info_text(const proto::ServerInfo& info, const std::vector<proto::SinkInfo>& sinks,
                      const std::string& socket);

std::string sinks_json(const std::vector<proto::SinkInfo>& sinks);
std::string streams_json(const std::vector<proto::StreamInfo>& streams);
// One array: the sinks, then the streams; each object has "kind".
std::string all_json(const std::vector<proto::SinkInfo>& sinks,
                     const std::vector<proto::StreamInfo>& streams);
std::string info_json(const proto::ServerInfo& info, const std::vector<proto::SinkInfo>& sinks,
                      const std::string& socket);

std::string clients_text(const std::vector<proto::ClientInfo>& clients);
std::string clients_json(const std::vector<proto::ClientInfo>& clients);
std::string apps_text(const std::vector<proto::AppInfo>& apps);
std::string sources_text(const std::vector<proto::SourceInfo>& sources);
std::string sources_json(const std::vector<proto::SourceInfo>& sources);
std::string apps_json(const std::vector<proto::AppInfo>& apps);

// One line each: "stream-moved stream=7 app=mpv sink=b from=a" or a JSON object.
std::string event_text(const proto::Event& event);
std::string event_json(const proto::Event& event);

} // namespace audiod::ctl

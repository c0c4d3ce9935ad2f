// How audioctl prints what the server reports: aligned text tables for
// people, JSON for scripts.
#pragma once

#include "messages.h"

#include <string>
#include <vector>

namespace audiod::ctl {

std::string sinks_text(const std::vector<proto::SinkInfo>& sinks);
std::string streams_text(const std::vector<proto::StreamInfo>& streams);
std::string info_text(const proto::ServerInfo& info, const std::vector<proto::SinkInfo>& sinks);

std::string sinks_json(const std::vector<proto::SinkInfo>& sinks);
std::string streams_json(const std::vector<proto::StreamInfo>& streams);
// One array: the sinks, then the streams; each object has "kind".
std::string all_json(const std::vector<proto::SinkInfo>& sinks,
                     const std::vector<proto::StreamInfo>& streams);
std::string info_json(const proto::ServerInfo& info, const std::vector<proto::SinkInfo>& sinks);

} // namespace audiod::ctl

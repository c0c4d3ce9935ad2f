// audioctl's commands. Each returns the process exit status (0 success,
// 1 the server refused or failed, 2 a usage error) and prints its own
// output and errors.
#pragma once

#include "request_channel.h"

#include <string>
#include <vector>

namespace audiod::ctl {

struct Session {
    proto::RequestChannel channel;
    bool json = false;
    int timeout_ms = 2000;
};

int run_list(Session& session, const std::vector<std::string>& args);
int run_info(Session& session, const std::vector<std::string>& args);
int run_set_volume(Session& session, const std::vector<std::string>& args);

} // namespace audiod::ctl

// The test server's state as `audioctl --json list WHAT` prints it, asked
// from this process. The tests' waits poll that state several times a
// second, and a process started for each probe cost 45 ms (TSan) to 80 ms
// (ASan with LeakSanitizer) of CPU: 1,400 of them made a quarter of a
// sanitizer step's CPU. The JSON is made by audioctl's own code
// (tools/audioctl/output.cpp); the audioctl program is still run by every
// test that acts on the server, and by the audioctl suite.
#pragma once

#include <string>

namespace audiod::test {

// WHAT: "streams", "sinks", "sources", "clients" or "apps". The server is
// the one $AUDIOD_SOCKET names (a ServerProcess sets it). "" when it cannot
// be reached or does not answer within 10 s, as audioctl prints nothing then.
std::string list_json(const std::string& what);

} // namespace audiod::test

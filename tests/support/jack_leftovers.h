#pragma once

#include <string>

namespace audiod::test {

// What JACK leaves in /dev/shm of a client that ends without closing (a
// PortAudio JACK stream that failed stays open by design, until its audiod
// ends; each killed audiod's) and of a jackd that had to be killed: a
// semaphore per client, the server's socket. Only names that hold `server`
// go, so nothing of another test's or user's server is touched.
void remove_jack_leftovers(const std::string& server);

} // namespace audiod::test

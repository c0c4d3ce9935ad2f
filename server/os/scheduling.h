// Raising the calling thread's scheduling class for the audio cycle.
#pragma once

#include <string>

namespace audiod {

// Tries SCHED_FIFO at `priority` (allowed for root or under RLIMIT_RTPRIO);
// failing that, a raised nice level; failing that, leaves the thread as it
// is. Returns what is in force, e.g. "SCHED_FIFO priority 20" or
// "SCHED_OTHER nice -11", for `audioctl info`. Thread: the one to raise.
std::string raise_current_thread_priority(int priority);

} // namespace audiod

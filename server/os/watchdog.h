// Keeping real-time threads from ever locking up the machine.
//
// Two independent guards:
//  * The control thread checks every sink's cycle counter on its periodic
//    tick (Engine::tick). A sink whose RT thread stops completing cycles is
//    demoted from SCHED_FIFO to SCHED_OTHER (and reported), so a bug in a
//    cycle cannot starve the rest of the system.
//  * RLIMIT_RTTIME: the kernel sends SIGXCPU when a SCHED_FIFO thread runs
//    for longer than the soft limit without blocking. The handler demotes
//    every registered RT thread with raw sched_setscheduler(2) calls (which
//    are async-signal-safe), and the soft limit is set well below the hard
//    one, so the signal leads to demotion and never to the kernel's SIGKILL.
//
// Thread: register/unregister from the RT thread itself; the rest from the
// control thread; the signal handler from wherever the kernel delivers it.
#pragma once

#include <cstdint>
#include <string>
#include <sys/types.h>

namespace audiod {

// Sets RLIMIT_RTTIME's soft limit and installs the SIGXCPU handler. Returns
// a description for the log ("RLIMIT_RTTIME soft 200 ms, hard unlimited").
std::string install_rt_time_guard();

// Records the calling thread as a real-time thread; returns its slot (or -1
// if the table is full, in which case only the control-thread watchdog
// protects it). Thread: the RT thread.
int register_rt_thread() noexcept;
void unregister_rt_thread(int slot) noexcept;

// Demotes one thread (by kernel tid) to SCHED_OTHER. Returns true if it was
// real-time before. Thread: any.
bool demote_thread(pid_t tid) noexcept;

// How many times SIGXCPU demoted the RT threads (0 normally). Thread: any.
uint64_t rt_time_demotions() noexcept;

// Whether the kernel currently runs `tid` under SCHED_FIFO or SCHED_RR.
bool is_realtime(pid_t tid) noexcept;

} // namespace audiod

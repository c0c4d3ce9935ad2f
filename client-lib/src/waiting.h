// How a stream's callers wait: for the server's wake-ups, for the kept
// clock while no server plays the stream, always against a deadline.
// Thread: any caller of a stream; none of these holds the stream's mutex
// while it waits.
#pragma once

#include "client_internal.h"

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace audiod::client {

uint64_t frames_to_ms(uint64_t frames, uint32_t rate);

// A read or write of `frames` with timeout_ms (negative: the audio's own
// duration plus the default timeout) ends by this deadline.
Deadline transfer_deadline(size_t frames, uint32_t rate, int timeout_ms);

// What a read or write returns: the frames moved, or why none were.
long transfer_result(size_t moved, size_t frames, int timeout_ms);

// Clears the stream's pending wake-ups.
void drain_wakeups(int fd);

// Adds the context's socket to its hang-up set (made on first use), or
// takes it out before the socket is replaced: closing it is not enough
// where a forked child still holds it, and a hung-up socket left in the set
// would end every wait at once. Call under request_mutex, or before the
// context is shared.
void watch_for_hangup(audiod_context& ctx);
void unwatch_hangup(audiod_context& ctx);

// Makes the stream's wait_epoll (left invalid if that fails: the stream
// then waits with poll), and keeps wake_fd in it across rebind's dup2:
// out before, in after (epoll knows a descriptor by its open file, so the
// old eventfd, still held by a stalled server, would otherwise stay in).
// Call with core.mutex held, or before the core is shared.
void make_wait_epoll(StreamCore& core);
void unwatch_wake_fd(StreamCore& core);
void watch_wake_fd(StreamCore& core);

// Whether the stream waits on its epoll set's edges: then each server
// wake-up is reported once and the eventfd is never read empty.
bool waits_on_edges(const StreamCore& core);

// Waits for whatever lets a transfer or drain progress: the kept clock's
// pace (`keep_clock_wait` > 0) when no server plays the stream (a
// supervisor wake-up ends it early), else the server's wake-up; a server
// that hangs up meanwhile makes the stream keep its clock (or breaks it).
// A self-timed writer (`self_wake` set, see self_timed_wake_locked) also
// ends its wait at that time, as if woken. Returns 0 to go on, or
// AUDIOD_E_TIMEOUT.
int wait_for_progress(StreamCore& core, std::chrono::nanoseconds keep_clock_wait,
                      const Deadline& deadline,
                      MonoClock::time_point self_wake = MonoClock::time_point{});

// For a writer about to wait for room: when to look again by its own
// clock (self_timing.h) if it waits on its epoll set's edges and the
// server's cycles are on time, else the epoch (wait to be signalled). Sets
// or clears kClientFlagSelfTimed to match, so that the server signals
// every writer on the edges that does not time itself (a poller's flag is
// left as audiod_stream_fd() and audiod_stream_next_wakeup() set it).
// Call with core.mutex held.
MonoClock::time_point self_timed_wake_locked(StreamCore& core, MonoClock::time_point now);

// The same for a program that waits on audiod_stream_fd() with a timer of
// its own (audiod_stream_next_wakeup): the time in CLOCK_MONOTONIC ns, or
// 0, whatever the stream waits on. Call with core.mutex held.
uint64_t plan_self_timed_wake_locked(StreamCore& core, MonoClock::time_point now);

} // namespace audiod::client

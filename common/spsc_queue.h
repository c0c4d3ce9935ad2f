// A bounded single-producer/single-consumer queue of trivially copyable items.
//
// The real-time primitive between a sink's RT thread and the control thread
// (commands one way, events the other) and between the file sink's RT thread
// and its writer thread (bytes). The storage is allocated once, in the
// constructor, on a non-RT thread; after that:
//   try_push / try_push_n   Thread: the one producer. Never blocks, never allocates.
//   try_pop / try_pop_n     Thread: the one consumer. Never blocks, never allocates.
// Positions are free-running 64-bit counters (no wrap in practice), so
// "full" and "empty" need no spare slot.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

namespace audiod {

template <class T>
class SpscQueue {
    static_assert(std::is_trivially_copyable_v<T>, "items are copied with memcpy");
    static_assert(std::atomic<uint64_t>::is_always_lock_free);

public:
    // Capacity is rounded up to a power of two. Thread: control (allocates).
    explicit SpscQueue(size_t min_capacity)
        : capacity_(std::bit_ceil(std::max<size_t>(min_capacity, 2)))
        , mask_(capacity_ - 1)
        , slots_(std::make_unique<T[]>(capacity_)) {}

    SpscQueue(const SpscQueue&) = delete;
    SpscQueue& operator=(const SpscQueue&) = delete;

    [[nodiscard]] size_t capacity() const noexcept { return capacity_; }

    // Thread: producer.
    [[nodiscard]] bool try_push(const T& item) noexcept { return try_push_n(&item, 1) == 1; }

    // Pushes as many of `items` as fit; returns how many. Thread: producer.
    size_t try_push_n(const T* items, size_t count) noexcept {
        const uint64_t tail = tail_.load(std::memory_order_relaxed);
        const uint64_t head = head_.load(std::memory_order_acquire);
        const size_t n = std::min<size_t>(count, capacity_ - static_cast<size_t>(tail - head));
        copy_in(tail, items, n);
        tail_.store(tail + n, std::memory_order_release);
        return n;
    }

    // Thread: consumer.
    [[nodiscard]] bool try_pop(T& item) noexcept { return try_pop_n(&item, 1) == 1; }

    // Pops up to `count` items into `out`; returns how many. Thread: consumer.
    size_t try_pop_n(T* out, size_t count) noexcept {
        const uint64_t head = head_.load(std::memory_order_relaxed);
        const uint64_t tail = tail_.load(std::memory_order_acquire);
        const size_t n = std::min<size_t>(count, static_cast<size_t>(tail - head));
        copy_out(head, out, n);
        head_.store(head + n, std::memory_order_release);
        return n;
    }

    // A snapshot; exact only on the consumer or producer thread. Thread: any.
    [[nodiscard]] size_t size_approx() const noexcept {
        return static_cast<size_t>(tail_.load(std::memory_order_acquire) -
                                   head_.load(std::memory_order_acquire));
    }

private:
    void copy_in(uint64_t pos, const T* items, size_t n) noexcept {
        const size_t offset = static_cast<size_t>(pos) & mask_;
        const size_t first = std::min(n, capacity_ - offset);
        std::memcpy(&slots_[offset], items, first * sizeof(T));
        std::memcpy(&slots_[0], items + first, (n - first) * sizeof(T));
    }

    void copy_out(uint64_t pos, T* out, size_t n) const noexcept {
        const size_t offset = static_cast<size_t>(pos) & mask_;
        const size_t first = std::min(n, capacity_ - offset);
        std::memcpy(out, &slots_[offset], first * sizeof(T));
        std::memcpy(out + first, &slots_[0], (n - first) * sizeof(T));
    }

    const size_t capacity_;
    const size_t mask_;
    std::unique_ptr<T[]> slots_;
    alignas(64) std::atomic<uint64_t> head_{0}; // written by the consumer
    alignas(64) std::atomic<uint64_t> tail_{0}; // written by the producer
};

} // namespace audiod

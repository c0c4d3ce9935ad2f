// A small value one thread publishes and any thread reads whole, without
// either waiting: a sequence lock. The real-time thread publishes (a few
// relaxed stores between two counter bumps, never a wait); a reader that
// a publication overlaps sees the counter move and reads again. For values
// that change every cycle and are read now and then: a stream's position
// and when it is heard, a receiver's map from its sender's clock to ours.
//
// The value is kept as 64-bit atomic words, so that the overlapping read
// it throws away is no data race either.
// Thread: publish on one writer thread; read on any.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace audiod {

template <class T>
class SeqLocked {
    static_assert(std::is_trivially_copyable_v<T>);
    static constexpr size_t kWords = (sizeof(T) + 7) / 8;

public:
    // Ordering without fences (which ThreadSanitizer does not model): a
    // word stored with release carries the odd count before it to a reader
    // that loads the word with acquire, whose second look at the count,
    // which cannot move before that load, then sees it changed.
    void publish(const T& value) noexcept {
        uint64_t words[kWords] = {};
        std::memcpy(words, &value, sizeof(T));
        const uint64_t seq = seq_.load(std::memory_order_relaxed);
        seq_.store(seq + 1, std::memory_order_relaxed); // odd: being written
        for (size_t i = 0; i < kWords; ++i) {
            words_[i].store(words[i], std::memory_order_release);
        }
        seq_.store(seq + 2, std::memory_order_release);
    }

    // The last value published (T{} before the first).
    [[nodiscard]] T read() const noexcept {
        uint64_t words[kWords];
        for (;;) {
            const uint64_t before = seq_.load(std::memory_order_acquire);
            if ((before & 1) != 0) {
                continue;
            }
            for (size_t i = 0; i < kWords; ++i) {
                words[i] = words_[i].load(std::memory_order_acquire);
            }
            if (seq_.load(std::memory_order_relaxed) == before) {
                break;
            }
        }
        T value;
        std::memcpy(&value, words, sizeof(T));
        return value;
    }
    // The last value published, if no publication overlaps this one look
    // (for a reader that must not wait, the RT thread reading what another
    // thread publishes: it keeps the value it had and looks again later).
    [[nodiscard]] bool try_read(T& out) const noexcept {
        uint64_t words[kWords];
        const uint64_t before = seq_.load(std::memory_order_acquire);
        if ((before & 1) != 0) {
            return false;
        }
        for (size_t i = 0; i < kWords; ++i) {
            words[i] = words_[i].load(std::memory_order_acquire);
        }
        if (seq_.load(std::memory_order_relaxed) != before) {
            return false;
        }
        std::memcpy(&out, words, sizeof(T));
        return true;
    }

private:
    std::atomic<uint64_t> seq_{0};
    std::atomic<uint64_t> words_[kWords] = {};
};

} // namespace audiod

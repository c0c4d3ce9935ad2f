// Replacements for the allocator and pthread_mutex_lock that count calls
// made while the calling thread is inside an RT cycle. Linked only into the
// RT-safety test binary (the sanitizer builds replace malloc themselves).
// They forward to glibc's own entry points, so the program still works.
#include "rt_hooks.h"
#include "os/rt_scope.h"

#include <cstddef>
#include <dlfcn.h>
#include <pthread.h>

extern "C" {
void* __libc_malloc(size_t size);
void __libc_free(void* ptr);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* ptr, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
}

namespace audiod::test {

RtViolations& rt_violations() {
    static RtViolations violations;
    return violations;
}

} // namespace audiod::test

namespace {

using LockFn = int (*)(pthread_mutex_t*);

// Resolved before main(), while no RT thread exists.
LockFn g_real_lock = reinterpret_cast<LockFn>(::dlsym(RTLD_NEXT, "pthread_mutex_lock"));

inline void note_allocation() {
    if (audiod::t_in_rt_cycle) {
        audiod::test::rt_violations().allocations.fetch_add(1, std::memory_order_relaxed);
    }
}

} // namespace

extern "C" {

void* malloc(size_t size) {
    note_allocation();
    return __libc_malloc(size);
}

void free(void* ptr) {
    if (ptr != nullptr && audiod::t_in_rt_cycle) {
        audiod::test::rt_violations().frees.fetch_add(1, std::memory_order_relaxed);
    }
    __libc_free(ptr);
}

void* calloc(size_t count, size_t size) {
    note_allocation();
    return __libc_calloc(count, size);
}

void* realloc(void* ptr, size_t size) {
    note_allocation();
    return __libc_realloc(ptr, size);
}

void* aligned_alloc(size_t alignment, size_t size) {
    note_allocation();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void** out, size_t alignment, size_t size) {
    note_allocation();
    void* p = __libc_memalign(alignment, size);
    if (p == nullptr) {
        return 12; // ENOMEM
    }
    *out = p;
    return 0;
}

int pthread_mutex_lock(pthread_mutex_t* mutex) {
    if (audiod::t_in_rt_cycle) {
        audiod::test::rt_violations().locks.fetch_add(1, std::memory_order_relaxed);
    }
    if (g_real_lock == nullptr) {
        g_real_lock = reinterpret_cast<LockFn>(::dlsym(RTLD_NEXT, "pthread_mutex_lock"));
    }
    return g_real_lock(mutex);
}

} // extern "C"

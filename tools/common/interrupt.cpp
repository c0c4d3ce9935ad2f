#include "interrupt.h"

#include <atomic>
#include <csignal>

namespace audiod::cli {

namespace {

std::atomic<bool> g_interrupted{false};

void on_signal(int) {
    g_interrupted.store(true);
}

} // namespace

void stop_on_interrupt() {
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
}

bool interrupted() noexcept {
    return g_interrupted.load();
}

} // namespace audiod::cli

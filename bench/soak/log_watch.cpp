#include "log_watch.h"

#include <fstream>

namespace audiod::soak {

void LogWatch::poll(double now_s) {
    std::ifstream log(path_, std::ios::binary);
    if (!log) {
        return;
    }
    log.seekg(0, std::ios::end);
    const auto size = static_cast<uint64_t>(log.tellg());
    if (size < offset_) {
        offset_ = 0; // a new file (not expected: every server appends)
    }
    log.seekg(static_cast<std::streamoff>(offset_));
    std::string chunk(size - offset_, '\0');
    log.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    offset_ += static_cast<uint64_t>(log.gcount());
    partial_.append(chunk, 0, static_cast<size_t>(log.gcount()));
    size_t start = 0;
    for (size_t end; (end = partial_.find('\n', start)) != std::string::npos; start = end + 1) {
        const std::string line = partial_.substr(start, end - start);
        ++lines_;
        // "audiod: LEVEL COMPONENT: text"
        const bool error = line.rfind("audiod: error ", 0) == 0;
        const bool warning = line.rfind("audiod: warning ", 0) == 0;
        if (error || warning) {
            const bool stall = line.find("completed no cycle") != std::string::npos;
            complaints_.push_back({now_s, line, error, stall});
        }
    }
    partial_.erase(0, start);
}

} // namespace audiod::soak

// A named pipe that a player reads as its input file, written by the test
// in parts. A stream fed this way cannot end before the test has done what
// it must do while the stream plays: the test writes the first part, acts
// (moves the stream, changes a volume), then writes the rest and closes.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace audiod::test {

class Feed {
public:
    // Creates the pipe at PATH (the player is then started on path()).
    explicit Feed(std::string path);
    Feed(const Feed&) = delete;
    ~Feed();
    const std::string& path() const { return path_; }

    // Writes all of DATA, waiting (up to `limit` in all, failing the test
    // after) for the player to open the pipe and to read; a write blocks
    // while the pipe is full, so the player's pace sets the test's.
    void write(const void* data, size_t bytes,
               std::chrono::milliseconds limit = std::chrono::seconds(60));
    // End of file for the player.
    void close();

private:
    std::string path_;
    int fd_ = -1;
};

} // namespace audiod::test

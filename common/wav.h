// WAV files: a header parser for untrusted input, a reader that works on
// pipes, and a writer whose files survive the process being killed.
//
// Design note. One header scanner (in wav.cpp) walks the RIFF chunks; it is
// fed bytes in pieces, so parse_wav_header (all bytes at once) and WavReader
// (a read(2) at a time, no seeking) take exactly the same decisions and cannot
// drift apart. The scanner keeps at most one fmt chunk's first 40 bytes and
// skips everything else by counting, so no input makes it allocate.
//
// Only little-endian RIFF/WAVE is understood: tag 1 (PCM), tag 3 (IEEE float)
// and 0xFFFE (WAVE_FORMAT_EXTENSIBLE with the PCM or float subformat). RF64,
// RIFX and compressed encodings are refused with a message saying so.
//
// s24le (24 bits in the low bits of a 32-bit container, as the audiod API
// defines it) is stored in a WAV as EXTENSIBLE with 24 valid bits in 32, where
// the WAV convention puts the 24 bits in the HIGH bits of the container.
// WavWriter and WavReader shift between the two, so files interoperate with
// other tools; a caller reading the data chunk of an s24le file itself (after
// parse_wav_header) must shift each sample right by 8 bits.
//
// Threads: none of this is for the real-time thread (it does blocking I/O and
// allocates); any other thread may use it. Objects are not shared between
// threads.
#pragma once

#include "protocol/sample_format.h"
#include "protocol/unique_fd.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace audiod {

inline constexpr uint32_t kWavMaxChannels = 32;
inline constexpr uint32_t kWavMaxRate = 768000;
// How far into a file the data chunk may start; past this the input is
// refused rather than skipped, so a hostile header cannot make a reader
// consume a pipe forever.
inline constexpr uint64_t kWavMaxHeaderBytes = 1024 * 1024;

struct WavFormat {
    SampleFormat format = SampleFormat::invalid;
    uint32_t rate = 0;
    uint32_t channels = 0;
};

// Bytes per frame (one sample of every channel); 0 unless the sample format
// is known and there are 1..kWavMaxChannels channels.
[[nodiscard]] uint32_t frame_bytes(const WavFormat& format) noexcept;

struct WavInfo {
    WavFormat format;
    // Offset of the first sample byte from the start of the file.
    uint64_t data_offset = 0;
    // When data_bytes_known: the data chunk's declared size. Otherwise the
    // header's size was 0, 0xFFFFFFFF or more than the input holds (a file cut
    // off by a crash, or a WAV streamed on a pipe), and the samples run to the
    // end of the stream; data_bytes is then a lower bound: what
    // parse_wav_header found in its input, and 0 from WavReader.
    uint64_t data_bytes = 0;
    bool data_bytes_known = false;
};

// Parses the beginning of a WAV file: the whole file or any prefix of it that
// reaches the data chunk's header. Returns a short message when the bytes are
// not a supported WAV ("truncated header" when they end before the data
// chunk). On success data_offset + data_bytes <= bytes.size(): a declared
// size that does not fit in `bytes` counts as unknown (see WavInfo), so pass
// the whole file if its declared size matters.
// Never reads outside `bytes`, never throws on bad input, allocates only for
// the error message. This is the fuzz entry point.
[[nodiscard]] std::variant<WavInfo, std::string> parse_wav_header(std::span<const uint8_t> bytes);

// Reads a WAV sequentially from a file descriptor, which may be a pipe: it
// never seeks. The fd should be blocking; on a non-blocking one, -EAGAIN from
// read_frames() is an error like any other, and retrying loses nothing.
class WavReader {
public:
    // Reads and checks the header from `fd` (not owned; it must outlive the
    // reader). On error the stream position is wherever reading stopped.
    [[nodiscard]] static std::variant<WavReader, std::string> open(int fd);
    // Opens `path` read-only and reads its header; the reader owns the fd.
    [[nodiscard]] static std::variant<WavReader, std::string> open_path(const std::string& path);

    WavReader(WavReader&&) noexcept = default;
    WavReader& operator=(WavReader&&) noexcept = default;
    WavReader(const WavReader&) = delete;
    WavReader& operator=(const WavReader&) = delete;
    ~WavReader() = default;

    [[nodiscard]] const WavInfo& info() const noexcept { return info_; }

    // Reads up to `max_frames` whole frames into `dest` (room for max_frames *
    // frame_bytes(info().format) bytes), blocking until it has them all or the
    // data ends. Returns the frames read (0 if max_frames is 0); 0 once the
    // data has ended: the declared size reached or the end of the stream,
    // whichever comes first, a partial frame at the end being dropped. Or
    // -errno if reading failed before a frame was complete; the bytes already
    // read are kept, so a retry loses nothing. A failure after some frames
    // returns those frames now and the error on the next call.
    [[nodiscard]] long read_frames(void* dest, size_t max_frames);

private:
    WavReader() = default;
    [[nodiscard]] std::optional<std::string> read_header();
    [[nodiscard]] int fd() const noexcept { return owned_.valid() ? owned_.get() : borrowed_fd_; }

    UniqueFd owned_;
    int borrowed_fd_ = -1;
    WavInfo info_;
    uint32_t frame_bytes_ = 0;
    uint64_t data_left_ = 0;       // bytes of data still to deliver; UINT64_MAX if unknown
    std::vector<uint8_t> pending_; // bytes read but not yet delivered
    size_t pending_pos_ = 0;
    int deferred_error_ = 0;
    bool eof_ = false;
};

// Writes a WAV file so that it is valid at every flush_header(): the header
// is written first with a data size of 0 (which readers treat as "up to the
// end of the file"), samples are appended, and flush_header() rewrites the
// two size fields in place.
class WavWriter {
public:
    // Creates (or truncates) `path` and writes the header. The format must be
    // valid: a known SampleFormat, 1..kWavMaxChannels channels, 1..kWavMaxRate Hz.
    [[nodiscard]] static std::variant<WavWriter, std::string> create(const std::string& path,
                                                                     WavFormat format);

    // The most sample data one file in `format` can hold: a WAV's sizes are
    // 32-bit, so a little under 4 GiB, rounded down to whole frames.
    [[nodiscard]] static uint64_t max_data_bytes(const WavFormat& format) noexcept;

    WavWriter(WavWriter&& other) noexcept = default;
    // Finishes this writer's own file first.
    WavWriter& operator=(WavWriter&& other) noexcept;
    WavWriter(const WavWriter&) = delete;
    WavWriter& operator=(const WavWriter&) = delete;
    // Calls finish() if it has not been called; its error is lost.
    ~WavWriter();

    // Appends sample bytes, which must be whole frames in the file's format
    // (-EINVAL otherwise). Returns 0, or -errno: -EFBIG (nothing written) if
    // the data would exceed max_data_bytes(), -EBADF after finish(), or the
    // write(2) error, in which case the bytes that did reach the file still
    // count and a later flush_header() describes them.
    [[nodiscard]] int append(const void* data, size_t bytes);

    // Rewrites the header's size fields to cover everything appended so far.
    // Once it returns 0, a reader of the file sees all that data even if this
    // process is killed. (It does not fsync: surviving a power loss is the
    // caller's business.) Returns 0 or -errno.
    [[nodiscard]] int flush_header();

    // Pads an odd-sized data chunk, flushes the header and closes the file.
    // Returns 0 or -errno; the file is closed either way. Further calls return 0.
    int finish();

    // Sample bytes appended so far.
    [[nodiscard]] uint64_t data_bytes() const noexcept { return data_bytes_; }

    // Lowers the limit append() enforces, so tests can exercise the refusal
    // without writing 4 GiB. Never raises it above max_data_bytes().
    void lower_limit_for_testing(uint64_t max_bytes) noexcept;

private:
    WavWriter() = default;
    [[nodiscard]] int write_header(bool padded) noexcept;

    UniqueFd fd_;
    WavFormat format_;
    uint64_t data_bytes_ = 0;
    uint64_t limit_ = 0;
};

} // namespace audiod

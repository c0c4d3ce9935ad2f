// Audio files, read and written through libsndfile (Debian's libsndfile1,
// fuzzed upstream; no parser of our own for hostile files): audioplay plays
// what users have — WAV, FLAC, Ogg Vorbis and Opus, MP3, AIFF and the rest
// libsndfile knows — and audiorec and the file sink write WAV or FLAC.
//
// Formats. A reader delivers frames in the audiod sample format closest to
// the file's, and the server converts from there: s16le for 8 and 16-bit
// PCM (and 8/16-bit FLAC), s32le for 24 and 32-bit PCM (their bits in the
// high end, so 24-bit samples stay exact), f32le for float and every lossy
// encoding. A writer takes any audiod format; WAV stores it as it is (u8,
// 16, 24 or 32-bit PCM, 32-bit float), FLAC in 16 bits (u8, s16) or 24 bits
// (the rest: 32-bit and float samples lose their lowest bits, as FLAC holds
// no more).
//
// Crashes. A WAV writer's file is valid up to its last flush_header(): the
// header's sizes are rewritten in place (libsndfile's SFC_UPDATE_HEADER_NOW),
// so a reader after `kill -9` sees every frame written before it.
//
// Threads: blocking I/O and allocation, never the real-time thread; any
// other thread may use a reader or writer it owns.
#pragma once

#include "protocol/sample_format.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>

namespace audiod {

struct AudioFormat {
    SampleFormat format = SampleFormat::invalid;
    uint32_t rate = 0;
    uint32_t channels = 0;
};

// Bytes per frame of `format`; 0 unless its sample format is known.
[[nodiscard]] uint32_t frame_bytes(const AudioFormat& format) noexcept;

enum class Container : uint8_t { wav, flac };

// The container a path asks for: FLAC for a ".flac" ending (any case), WAV
// for anything else.
[[nodiscard]] Container container_for(const std::string& path) noexcept;
// "wav" or "flac" (for options and messages); nullopt for another word.
[[nodiscard]] std::optional<Container> parse_container(const std::string& name) noexcept;

class AudioFileReader {
public:
    // Opens PATH, or standard input for "-" (a pipe carries WAV and the other
    // uncompressed formats libsndfile reads without seeking). Fails with
    // libsndfile's reason for a file it cannot read.
    [[nodiscard]] static std::variant<AudioFileReader, std::string> open(const std::string& path);

    AudioFileReader(AudioFileReader&&) noexcept;
    AudioFileReader& operator=(AudioFileReader&&) noexcept;
    ~AudioFileReader();

    // How read_frames() delivers the frames (see the design note).
    [[nodiscard]] const AudioFormat& format() const noexcept { return format_; }
    // The file's length in frames, if it says.
    [[nodiscard]] std::optional<uint64_t> frames() const noexcept { return frames_; }
    // libsndfile's name for the file's format, e.g. "FLAC 24 bit".
    [[nodiscard]] const std::string& description() const noexcept { return description_; }

    // Reads up to `max_frames` frames into `dest` (room for max_frames *
    // frame_bytes(format()) bytes). Returns the frames read, 0 at the end,
    // or a negative errno when the file is damaged.
    [[nodiscard]] long read_frames(void* dest, size_t max_frames);

private:
    struct File;
    AudioFileReader() = default;

    std::unique_ptr<File> file_;
    AudioFormat format_;
    std::optional<uint64_t> frames_;
    std::string description_;
};

class AudioFileWriter {
public:
    // Creates (or truncates) PATH holding `format` in `container`. Fails
    // with a reason: an invalid format, or a file that cannot be created.
    [[nodiscard]] static std::variant<AudioFileWriter, std::string>
    create(const std::string& path, AudioFormat format, Container container);

    AudioFileWriter(AudioFileWriter&&) noexcept;
    AudioFileWriter& operator=(AudioFileWriter&&) noexcept;
    // Calls finish() if it has not been called; its error is lost.
    ~AudioFileWriter();

    // Appends sample bytes: whole frames in the writer's format (-EINVAL
    // otherwise). Returns 0 or a negative errno (-EIO when libsndfile could
    // not write them all, -EBADF after finish()).
    [[nodiscard]] int append(const void* data, size_t bytes);

    // Makes everything appended so far readable even if this process is
    // killed: a WAV's header is rewritten with the sizes so far. (No fsync:
    // surviving a power loss is the caller's business.) FLAC is written as
    // a stream and needs nothing. Returns 0 or a negative errno.
    [[nodiscard]] int flush_header();

    // Completes and closes the file. Returns 0 or a negative errno; the file
    // is closed either way. Further calls return 0.
    int finish();

    // Frames appended so far.
    [[nodiscard]] uint64_t frames() const noexcept { return frames_; }

    // The most sample data a WAV holds: its sizes are 32-bit, so a little
    // under 4 GiB (about 6 hours of 48 kHz stereo s16). append() refuses
    // (-EFBIG) what would pass it, so the file stays valid; FLAC has no limit.
    static constexpr uint64_t kMaxWavDataBytes = 0xFFFFFFFFu - (1u << 20);
    // Lowers that limit, so tests can see the refusal without writing 4 GiB.
    void lower_wav_limit_for_testing(uint64_t bytes) noexcept { wav_limit_ = bytes; }

private:
    struct File;
    AudioFileWriter() = default;

    std::unique_ptr<File> file_;
    AudioFormat format_;
    Container container_ = Container::wav;
    uint64_t frames_ = 0;
    uint64_t wav_limit_ = kMaxWavDataBytes;
};

} // namespace audiod

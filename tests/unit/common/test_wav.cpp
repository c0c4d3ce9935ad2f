#include "common/wav.h"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace audiod;

namespace audiod {
// For Boost.Test's messages.
inline std::ostream& operator<<(std::ostream& out, SampleFormat format) {
    return out << format_name(format);
}
} // namespace audiod

namespace {

constexpr uint64_t kFourGiBMinusOne = 0xFFFFFFFF;

// A fresh directory per test, removed afterwards.
struct TempDir {
    TempDir() {
        char pattern[] = "/tmp/audiod-test-wav-XXXXXX";
        BOOST_REQUIRE(::mkdtemp(pattern) != nullptr);
        path = pattern;
        // A reader that stops early makes the feeding thread's write fail;
        // it must see EPIPE, not die of SIGPIPE.
        std::signal(SIGPIPE, SIG_IGN);
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    [[nodiscard]] std::string file(const char* name) const { return path + "/" + name; }

    std::string path;
};

template <class T>
T take(std::variant<T, std::string>&& result) {
    if (auto* error = std::get_if<std::string>(&result)) {
        BOOST_FAIL("unexpected error: " << *error);
    }
    return std::move(std::get<T>(result));
}

template <class T>
std::string error_of(std::variant<T, std::string>&& result) {
    if (std::holds_alternative<T>(result)) {
        BOOST_FAIL("expected an error, got success");
    }
    return std::get<std::string>(result);
}

std::vector<uint8_t> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, std::span<const uint8_t> bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    BOOST_REQUIRE(out.good());
}

uint32_t le32(std::span<const uint8_t> bytes, size_t at) {
    return uint32_t{bytes[at]} | uint32_t{bytes[at + 1]} << 8 | uint32_t{bytes[at + 2]} << 16 |
           uint32_t{bytes[at + 3]} << 24;
}

uint16_t le16(std::span<const uint8_t> bytes, size_t at) {
    return static_cast<uint16_t>(bytes[at] | bytes[at + 1] << 8);
}

void check_same_bytes(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
    BOOST_TEST(got.size() == want.size());
    const size_t n = std::min(got.size(), want.size());
    const auto mismatch =
        std::mismatch(got.begin(), got.begin() + static_cast<ptrdiff_t>(n), want.begin());
    BOOST_TEST((mismatch.first == got.begin() + static_cast<ptrdiff_t>(n)),
               "first difference at byte " << (mismatch.first - got.begin()));
}

// Deterministic sample bytes. s24le samples are sign-extended, as the
// format requires (the top byte is not stored in a WAV).
std::vector<uint8_t> make_samples(const WavFormat& format, size_t frames, uint32_t seed) {
    std::vector<uint8_t> bytes(frames * frame_bytes(format));
    for (auto& byte : bytes) {
        seed = seed * 1664525 + 1013904223;
        byte = static_cast<uint8_t>(seed >> 24);
    }
    if (format.format == SampleFormat::s24le) {
        for (size_t i = 0; i < bytes.size(); i += 4) {
            bytes[i + 3] = (bytes[i + 2] & 0x80) ? 0xFF : 0x00;
        }
    }
    return bytes;
}

std::vector<uint8_t> read_all(WavReader& reader, size_t frames_per_call) {
    const uint32_t frame = frame_bytes(reader.info().format);
    std::vector<uint8_t> all;
    std::vector<uint8_t> buffer(frames_per_call * frame);
    for (;;) {
        const long got = reader.read_frames(buffer.data(), frames_per_call);
        BOOST_REQUIRE(got >= 0);
        BOOST_REQUIRE(static_cast<size_t>(got) <= frames_per_call);
        if (got == 0) {
            return all;
        }
        all.insert(all.end(), buffer.begin(), buffer.begin() + got * frame);
    }
}

// Builds WAV headers by hand, right or deliberately wrong.
struct Bytes {
    std::vector<uint8_t> v;

    Bytes& id(const char* four) {
        v.insert(v.end(), four, four + 4);
        return *this;
    }
    Bytes& u16(uint32_t x) {
        v.push_back(static_cast<uint8_t>(x));
        v.push_back(static_cast<uint8_t>(x >> 8));
        return *this;
    }
    Bytes& u32(uint32_t x) { return u16(x & 0xFFFF).u16(x >> 16); }
    Bytes& fill(size_t count, uint8_t byte) {
        v.insert(v.end(), count, byte);
        return *this;
    }
    Bytes& riff() { return id("RIFF").u32(0).id("WAVE"); }
    Bytes& fmt(uint32_t tag, uint32_t channels, uint32_t rate, uint32_t align, uint32_t bits) {
        return id("fmt ")
            .u32(16)
            .u16(tag)
            .u16(channels)
            .u32(rate)
            .u32(rate * align)
            .u16(align)
            .u16(bits);
    }
    Bytes& fmt_extensible(uint32_t channels, uint32_t rate, uint32_t align, uint32_t bits,
                          uint32_t valid_bits, uint32_t subformat, uint8_t guid_last = 0x71) {
        id("fmt ")
            .u32(40)
            .u16(0xFFFE)
            .u16(channels)
            .u32(rate)
            .u32(rate * align)
            .u16(align)
            .u16(bits);
        u16(22).u16(valid_bits).u32(3).u32(subformat);
        const uint8_t tail[] = {0x00, 0x00, 0x10, 0x00, 0x80, 0x00,
                                0x00, 0xaa, 0x00, 0x38, 0x9b, guid_last};
        v.insert(v.end(), std::begin(tail), std::end(tail));
        return *this;
    }
    Bytes& chunk(const char* four, uint32_t size, uint8_t byte = 0x55) {
        return id(four).u32(size).fill(size + (size & 1), byte);
    }
    Bytes& data(uint32_t declared, size_t actual, uint8_t byte = 0x11) {
        return id("data").u32(declared).fill(actual, byte);
    }
};

std::vector<uint8_t> s16_stereo_wav(uint32_t declared, size_t actual) {
    return Bytes{}.riff().fmt(1, 2, 48000, 4, 16).data(declared, actual).v;
}

WavInfo parse_ok(const std::vector<uint8_t>& bytes) {
    return take(parse_wav_header(bytes));
}

std::string parse_error(const std::vector<uint8_t>& bytes) {
    return error_of(parse_wav_header(bytes));
}

// Feeds bytes into a pipe from a thread, a few at a time.
class PipeFeeder {
public:
    PipeFeeder(std::vector<uint8_t> bytes, size_t piece)
        : bytes_(std::move(bytes)) {
        int fds[2];
        BOOST_REQUIRE(::pipe(fds) == 0);
        read_end_ = fds[0];
        const int write_end = fds[1];
        thread_ = std::thread([this, write_end, piece] {
            size_t done = 0;
            while (done < bytes_.size()) {
                const ssize_t n =
                    ::write(write_end, bytes_.data() + done, std::min(piece, bytes_.size() - done));
                if (n < 0 && errno == EINTR) {
                    continue;
                }
                if (n <= 0) {
                    break; // the reader gave up
                }
                done += static_cast<size_t>(n);
            }
            ::close(write_end);
        });
    }
    PipeFeeder(const PipeFeeder&) = delete;
    PipeFeeder& operator=(const PipeFeeder&) = delete;
    ~PipeFeeder() {
        ::close(read_end_); // unblocks the writer if the reader stopped early
        thread_.join();
    }
    [[nodiscard]] int read_end() const { return read_end_; }

private:
    std::vector<uint8_t> bytes_;
    int read_end_ = -1;
    std::thread thread_;
};

const SampleFormat kAllFormats[] = {SampleFormat::u8,    SampleFormat::s16le,
                                    SampleFormat::s24le, SampleFormat::s24_3le,
                                    SampleFormat::s32le, SampleFormat::f32le};

} // namespace

BOOST_AUTO_TEST_SUITE(wav)

// ---- WavWriter + WavReader ----

BOOST_AUTO_TEST_CASE(round_trip_every_format) {
    TempDir dir;
    for (const SampleFormat sample : kAllFormats) {
        for (const uint32_t channels : {1u, 2u, 3u}) {
            BOOST_TEST_CONTEXT(format_name(sample) << " x" << channels) {
                const WavFormat format{sample, 44100, channels};
                const std::string path = dir.file("round_trip.wav");
                const std::vector<uint8_t> samples = make_samples(format, 1001, channels);
                {
                    WavWriter writer = take(WavWriter::create(path, format));
                    const size_t frame = frame_bytes(format);
                    // Uneven appends, including more than the writer's block.
                    size_t at = 0;
                    for (const size_t frames : {1, 100, 900}) {
                        BOOST_TEST(writer.append(samples.data() + at, frames * frame) == 0);
                        at += frames * frame;
                    }
                    BOOST_TEST(writer.data_bytes() == samples.size());
                    BOOST_TEST(writer.finish() == 0);
                }
                const std::vector<uint8_t> file = read_file(path);
                const WavInfo parsed = parse_ok(file);
                BOOST_TEST(parsed.format.format == sample);
                BOOST_TEST(parsed.format.rate == 44100u);
                BOOST_TEST(parsed.format.channels == channels);
                BOOST_TEST(parsed.data_bytes_known);
                BOOST_TEST(parsed.data_bytes == samples.size());
                BOOST_TEST(file.size() == parsed.data_offset + samples.size() + samples.size() % 2);
                BOOST_TEST(le32(file, 4) == file.size() - 8);
                const uint16_t tag = le16(file, 20);
                if (sample == SampleFormat::f32le) {
                    BOOST_TEST(tag == 3);
                } else if (sample == SampleFormat::s24le) {
                    BOOST_TEST(tag == 0xFFFE);
                    BOOST_TEST(le16(file, 34) == 32); // container
                    BOOST_TEST(le16(file, 38) == 24); // valid bits
                } else {
                    BOOST_TEST(tag == 1);
                }

                WavReader reader = take(WavReader::open_path(path));
                BOOST_TEST(reader.info().format.format == sample);
                BOOST_TEST(reader.info().data_offset == parsed.data_offset);
                BOOST_TEST(reader.info().data_bytes_known);
                BOOST_TEST(reader.info().data_bytes == samples.size());
                check_same_bytes(read_all(reader, 7), samples);
                uint8_t spare[512];
                BOOST_TEST(reader.read_frames(spare, 1) == 0); // stays at the end
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(s24le_is_stored_high_justified_as_wav_requires) {
    TempDir dir;
    const std::string path = dir.file("s24.wav");
    const WavFormat format{SampleFormat::s24le, 48000, 1};
    const std::vector<uint8_t> samples = {0x56, 0x34, 0x12, 0x00, 0xBA, 0xDC, 0xFE, 0xFF};
    {
        WavWriter writer = take(WavWriter::create(path, format));
        BOOST_TEST(writer.append(samples.data(), samples.size()) == 0);
    } // the destructor finishes
    const std::vector<uint8_t> file = read_file(path);
    const WavInfo info = parse_ok(file);
    const std::vector<uint8_t> stored(file.begin() + static_cast<ptrdiff_t>(info.data_offset),
                                      file.end());
    check_same_bytes(stored, {0x00, 0x56, 0x34, 0x12, 0x00, 0xBA, 0xDC, 0xFE});
    WavReader reader = take(WavReader::open_path(path));
    check_same_bytes(read_all(reader, 1), samples);
}

BOOST_AUTO_TEST_CASE(odd_sized_data_is_padded) {
    TempDir dir;
    const std::string path = dir.file("odd.wav");
    const WavFormat format{SampleFormat::u8, 8000, 1};
    const std::vector<uint8_t> samples = {1, 2, 3};
    {
        WavWriter writer = take(WavWriter::create(path, format));
        BOOST_TEST(writer.append(samples.data(), samples.size()) == 0);
        BOOST_TEST(writer.finish() == 0);
        BOOST_TEST(writer.finish() == 0); // again: nothing to do
        BOOST_TEST(writer.append(samples.data(), 1) == -EBADF);
        BOOST_TEST(writer.flush_header() == -EBADF);
    }
    const std::vector<uint8_t> file = read_file(path);
    BOOST_TEST(file.size() == 44u + 3 + 1);
    BOOST_TEST(le32(file, 4) == 36u + 3 + 1);
    BOOST_TEST(le32(file, 40) == 3u);
    WavReader reader = take(WavReader::open_path(path));
    check_same_bytes(read_all(reader, 16), samples);
}

BOOST_AUTO_TEST_CASE(flushed_data_is_readable_while_more_is_appended) {
    TempDir dir;
    const std::string path = dir.file("live.wav");
    const WavFormat format{SampleFormat::s16le, 48000, 2};
    const std::vector<uint8_t> first = make_samples(format, 300, 1);
    const std::vector<uint8_t> second = make_samples(format, 200, 2);
    WavWriter writer = take(WavWriter::create(path, format));

    // Before any flush the data size is 0: "up to the end of the file".
    BOOST_TEST(writer.append(first.data(), first.size()) == 0);
    {
        const WavInfo info = parse_ok(read_file(path));
        BOOST_TEST(!info.data_bytes_known);
        BOOST_TEST(info.data_bytes == first.size());
        WavReader reader = take(WavReader::open_path(path));
        BOOST_TEST(!reader.info().data_bytes_known);
        check_same_bytes(read_all(reader, 64), first);
    }

    BOOST_TEST(writer.flush_header() == 0);
    BOOST_TEST(writer.append(second.data(), second.size()) == 0);
    {
        const WavInfo info = parse_ok(read_file(path));
        BOOST_TEST(info.data_bytes_known);
        BOOST_TEST(info.data_bytes == first.size());
        WavReader reader = take(WavReader::open_path(path));
        check_same_bytes(read_all(reader, 64), first);
    }

    BOOST_TEST(writer.finish() == 0);
    std::vector<uint8_t> both = first;
    both.insert(both.end(), second.begin(), second.end());
    WavReader reader = take(WavReader::open_path(path));
    check_same_bytes(read_all(reader, 64), both);
}

BOOST_AUTO_TEST_CASE(a_killed_writer_leaves_a_readable_file) {
    TempDir dir;
    const WavFormat format{SampleFormat::f32le, 48000, 2};
    const std::vector<uint8_t> first = make_samples(format, 300, 3);
    const std::vector<uint8_t> second = make_samples(format, 100, 4);
    std::vector<uint8_t> both = first;
    both.insert(both.end(), second.begin(), second.end());

    for (const bool flush : {true, false}) {
        BOOST_TEST_CONTEXT("flush_header before the kill: " << flush) {
            const std::string path = dir.file(flush ? "flushed.wav" : "unflushed.wav");
            const pid_t child = ::fork();
            BOOST_REQUIRE(child >= 0);
            if (child == 0) {
                // Only our code and async-signal-safe exits from here on.
                auto created = WavWriter::create(path, format);
                auto* writer = std::get_if<WavWriter>(&created);
                if (writer == nullptr || writer->append(first.data(), first.size()) != 0 ||
                    (flush && writer->flush_header() != 0) ||
                    writer->append(second.data(), second.size()) != 0) {
                    ::_exit(1);
                }
                ::kill(::getpid(), SIGKILL);
                ::_exit(2);
            }
            int status = 0;
            BOOST_REQUIRE(::waitpid(child, &status, 0) == child);
            BOOST_REQUIRE(WIFSIGNALED(status));
            BOOST_TEST(WTERMSIG(status) == SIGKILL);

            WavReader reader = take(WavReader::open_path(path));
            // Flushed: exactly what the header covered. Never flushed: the
            // header says "unknown" and everything that reached the file counts.
            BOOST_TEST(reader.info().data_bytes_known == flush);
            check_same_bytes(read_all(reader, 100), flush ? first : both);
        }
    }
}

BOOST_AUTO_TEST_CASE(move_keeps_one_owner) {
    TempDir dir;
    const WavFormat format{SampleFormat::s16le, 8000, 1};
    const std::vector<uint8_t> samples = make_samples(format, 10, 5);
    WavWriter a = take(WavWriter::create(dir.file("a.wav"), format));
    WavWriter b = take(WavWriter::create(dir.file("b.wav"), format));
    BOOST_TEST(a.append(samples.data(), samples.size()) == 0);
    BOOST_TEST(b.append(samples.data(), 4) == 0);
    b = std::move(a); // finishes b.wav first
    WavWriter c(std::move(b));
    BOOST_TEST(c.append(samples.data(), samples.size()) == 0);
    BOOST_TEST(c.finish() == 0);

    const WavInfo b_info = parse_ok(read_file(dir.file("b.wav")));
    BOOST_TEST(b_info.data_bytes_known);
    BOOST_TEST(b_info.data_bytes == 4u);
    const WavInfo a_info = parse_ok(read_file(dir.file("a.wav")));
    BOOST_TEST(a_info.data_bytes == 2 * samples.size());
}

BOOST_AUTO_TEST_CASE(append_takes_whole_frames_only) {
    TempDir dir;
    const WavFormat format{SampleFormat::s24_3le, 48000, 2};
    WavWriter writer = take(WavWriter::create(dir.file("frames.wav"), format));
    const std::vector<uint8_t> samples = make_samples(format, 4, 6);
    BOOST_TEST(writer.append(samples.data(), 5) == -EINVAL);
    BOOST_TEST(writer.append(samples.data(), 6) == 0);
    BOOST_TEST(writer.data_bytes() == 6u);
}

BOOST_AUTO_TEST_CASE(create_refuses_bad_formats_and_paths) {
    TempDir dir;
    const std::string path = dir.file("bad.wav");
    error_of(WavWriter::create(path, {SampleFormat::invalid, 48000, 2}));
    error_of(WavWriter::create(path, {SampleFormat::s16le, 48000, 0}));
    error_of(WavWriter::create(path, {SampleFormat::s16le, 48000, 33}));
    error_of(WavWriter::create(path, {SampleFormat::s16le, 0, 2}));
    error_of(WavWriter::create(path, {SampleFormat::s16le, 768001, 2}));
    error_of(WavWriter::create(path, {static_cast<SampleFormat>(99), 48000, 2}));
    const std::string error =
        error_of(WavWriter::create(dir.file("no/such/dir.wav"), {SampleFormat::s16le, 48000, 2}));
    BOOST_TEST(error.find("cannot create") != std::string::npos);
    take(WavWriter::create(path, {SampleFormat::s16le, 768000, 32}));
}

// ---- the 4 GiB limit ----

BOOST_AUTO_TEST_CASE(max_data_bytes_keeps_the_sizes_in_32_bits) {
    struct Case {
        WavFormat format;
        uint64_t header;
    };
    const Case cases[] = {
        {{SampleFormat::u8, 8000, 1}, 44},       {{SampleFormat::s16le, 48000, 2}, 44},
        {{SampleFormat::s24_3le, 48000, 3}, 44}, {{SampleFormat::s32le, 48000, 2}, 44},
        {{SampleFormat::f32le, 48000, 2}, 58},   {{SampleFormat::s24le, 48000, 6}, 68},
    };
    TempDir dir;
    for (const Case& c : cases) {
        BOOST_TEST_CONTEXT(format_name(c.format.format)) {
            const uint64_t frame = frame_bytes(c.format);
            const uint64_t max = WavWriter::max_data_bytes(c.format);
            BOOST_TEST(max == (kFourGiBMinusOne - c.header) / frame * frame);
            // Sizes written with the most data, and its pad byte, still fit.
            BOOST_TEST(c.header - 8 + max + 1 <= kFourGiBMinusOne);
            // And the header size the test assumes is the one written.
            WavWriter writer = take(WavWriter::create(dir.file("size.wav"), c.format));
            BOOST_TEST(writer.finish() == 0);
            BOOST_TEST(read_file(dir.file("size.wav")).size() == c.header);
        }
    }
    BOOST_TEST(WavWriter::max_data_bytes({SampleFormat::invalid, 48000, 2}) == 0u);
}

BOOST_AUTO_TEST_CASE(append_refuses_data_beyond_the_limit) {
    TempDir dir;
    const std::string path = dir.file("limit.wav");
    const WavFormat format{SampleFormat::s16le, 48000, 2};
    const std::vector<uint8_t> samples = make_samples(format, 8, 7);
    WavWriter writer = take(WavWriter::create(path, format));
    writer.lower_limit_for_testing(16); // four frames: the real limit scaled down

    BOOST_TEST(writer.append(samples.data(), 12) == 0);
    BOOST_TEST(writer.append(samples.data() + 12, 8) == -EFBIG); // all or nothing
    BOOST_TEST(writer.data_bytes() == 12u);
    BOOST_TEST(writer.append(samples.data() + 12, 4) == 0);
    BOOST_TEST(writer.append(samples.data() + 16, 4) == -EFBIG);
    writer.lower_limit_for_testing(1u << 20); // never raises it
    BOOST_TEST(writer.append(samples.data() + 16, 4) == -EFBIG);
    BOOST_TEST(writer.finish() == 0);

    BOOST_TEST(read_file(path).size() == 44u + 16);
    WavReader reader = take(WavReader::open_path(path));
    check_same_bytes(read_all(reader, 3), {samples.begin(), samples.begin() + 16});
}

// ---- WavReader on pipes ----

BOOST_AUTO_TEST_CASE(reads_a_file_through_a_pipe) {
    TempDir dir;
    const std::string path = dir.file("pipe.wav");
    const WavFormat format{SampleFormat::s24le, 96000, 2};
    const std::vector<uint8_t> samples = make_samples(format, 5000, 8);
    {
        WavWriter writer = take(WavWriter::create(path, format));
        BOOST_TEST(writer.append(samples.data(), samples.size()) == 0);
    }
    for (const size_t piece : {size_t{1}, size_t{5}, size_t{4096}}) {
        BOOST_TEST_CONTEXT("written " << piece << " bytes at a time") {
            PipeFeeder feeder(read_file(path), piece);
            WavReader reader = take(WavReader::open(feeder.read_end()));
            BOOST_TEST(reader.info().format.format == SampleFormat::s24le);
            BOOST_TEST(reader.info().format.rate == 96000u);
            BOOST_TEST(reader.info().data_bytes_known);
            check_same_bytes(read_all(reader, piece == 1 ? 1000 : 3), samples);
        }
    }
}

BOOST_AUTO_TEST_CASE(streams_of_unknown_length_with_big_chunks_before_the_data) {
    // What a program piping WAV out writes: size 0xFFFFFFFF, and here a LIST
    // chunk bigger than a pipe's buffer and of odd size, so that skipping it
    // takes many reads and honours the pad byte.
    const WavFormat format{SampleFormat::s16le, 48000, 2};
    const std::vector<uint8_t> samples = make_samples(format, 3000, 9);
    Bytes bytes;
    bytes.riff().chunk("LIST", 100001).fmt(1, 2, 48000, 4, 16).id("data").u32(0xFFFFFFFF);
    const size_t data_offset = bytes.v.size();
    bytes.v.insert(bytes.v.end(), samples.begin(), samples.end());
    bytes.fill(3, 0x77); // a partial last frame, as when a writer dies mid-write

    BOOST_TEST(parse_ok(bytes.v).data_offset == data_offset);
    PipeFeeder feeder(bytes.v, 1000);
    WavReader reader = take(WavReader::open(feeder.read_end()));
    BOOST_TEST(reader.info().data_offset == data_offset);
    BOOST_TEST(!reader.info().data_bytes_known);
    check_same_bytes(read_all(reader, 333), samples);
}

BOOST_AUTO_TEST_CASE(reader_stops_at_the_declared_size) {
    TempDir dir;
    const std::string path = dir.file("trailer.wav");
    Bytes bytes;
    bytes.riff().fmt(1, 1, 8000, 2, 16).data(8, 8, 0x22).chunk("LIST", 20, 0x33);
    write_file(path, bytes.v);
    WavReader reader = take(WavReader::open_path(path));
    check_same_bytes(read_all(reader, 100), std::vector<uint8_t>(8, 0x22));
}

BOOST_AUTO_TEST_CASE(reader_of_a_truncated_file_gives_whole_frames) {
    TempDir dir;
    const std::string path = dir.file("cut.wav");
    // Declares 400 bytes, holds 37: nine whole frames and a piece.
    write_file(path, s16_stereo_wav(400, 37));
    WavReader reader = take(WavReader::open_path(path));
    BOOST_TEST(reader.info().data_bytes_known); // a reader cannot seek to know better
    BOOST_TEST(read_all(reader, 4).size() == 36u);
}

BOOST_AUTO_TEST_CASE(a_partial_frame_survives_an_error_and_a_retry) {
    // A non-blocking pipe makes read(2) fail with EAGAIN mid-frame.
    int fds[2];
    BOOST_REQUIRE(::pipe(fds) == 0);
    const UniqueFd read_end(fds[0]);
    UniqueFd write_end(fds[1]);
    const std::vector<uint8_t> header = s16_stereo_wav(0xFFFFFFFF, 0);
    const std::vector<uint8_t> frames = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    BOOST_REQUIRE(::write(write_end.get(), header.data(), header.size()) ==
                  static_cast<ssize_t>(header.size()));
    BOOST_REQUIRE(::write(write_end.get(), frames.data(), 6) == 6); // a frame and a half
    WavReader reader = take(WavReader::open(read_end.get()));
    BOOST_REQUIRE(::fcntl(read_end.get(), F_SETFL, O_NONBLOCK) == 0);

    std::array<uint8_t, 40> buffer{};
    BOOST_TEST(reader.read_frames(buffer.data(), 10) == 1); // the whole frame first
    check_same_bytes({buffer.begin(), buffer.begin() + 4}, {1, 2, 3, 4});
    BOOST_TEST(reader.read_frames(buffer.data(), 10) == -EAGAIN); // then the error
    BOOST_TEST(reader.read_frames(buffer.data(), 10) == -EAGAIN); // nothing new yet

    BOOST_REQUIRE(::write(write_end.get(), frames.data() + 6, 6) == 6);
    write_end.reset();
    BOOST_TEST(reader.read_frames(buffer.data(), 10) == 2); // the half kept, then completed
    check_same_bytes({buffer.begin(), buffer.begin() + 8}, {5, 6, 7, 8, 9, 10, 11, 12});
    BOOST_TEST(reader.read_frames(buffer.data(), 10) == 0);
}

BOOST_AUTO_TEST_CASE(reader_does_not_own_a_borrowed_fd) {
    TempDir dir;
    const std::string path = dir.file("borrowed.wav");
    write_file(path, s16_stereo_wav(8, 8));
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    BOOST_REQUIRE(fd >= 0);
    {
        WavReader reader = take(WavReader::open(fd));
        BOOST_TEST(read_all(reader, 10).size() == 8u);
    }
    BOOST_TEST(::fcntl(fd, F_GETFD) != -1);
    ::close(fd);
}

BOOST_AUTO_TEST_CASE(reader_errors) {
    TempDir dir;
    BOOST_TEST(error_of(WavReader::open(-1)) == "invalid file descriptor");
    BOOST_TEST(error_of(WavReader::open_path(dir.file("missing.wav"))).find("cannot open") !=
               std::string::npos);

    const std::string empty = dir.file("empty.wav");
    write_file(empty, {});
    BOOST_TEST(error_of(WavReader::open_path(empty)).find("empty input") != std::string::npos);

    const std::string cut = dir.file("cut_header.wav");
    std::vector<uint8_t> header = s16_stereo_wav(8, 8);
    header.resize(30);
    write_file(cut, header);
    BOOST_TEST(error_of(WavReader::open_path(cut)).find("truncated header") != std::string::npos);

    const int write_only = ::open(empty.c_str(), O_WRONLY | O_CLOEXEC);
    BOOST_REQUIRE(write_only >= 0);
    BOOST_TEST(error_of(WavReader::open(write_only)).find("cannot read") != std::string::npos);
    ::close(write_only);
}

// ---- parse_wav_header ----

BOOST_AUTO_TEST_CASE(every_prefix_of_a_header_is_handled) {
    TempDir dir;
    const std::string path = dir.file("prefix.wav");
    Bytes bytes;
    bytes.riff().chunk("LIST", 5).fmt_extensible(2, 48000, 8, 32, 24, 1).chunk("fact", 4);
    const size_t data_offset = bytes.v.size() + 8;
    bytes.data(16, 16);
    const WavInfo full = parse_ok(bytes.v);
    BOOST_TEST(full.data_offset == data_offset);
    BOOST_TEST(full.data_bytes_known);
    BOOST_TEST(full.data_bytes == 16u);
    BOOST_TEST(full.format.format == SampleFormat::s24le);

    for (size_t length = 0; length <= bytes.v.size(); ++length) {
        BOOST_TEST_CONTEXT("prefix of " << length << " bytes") {
            const std::vector<uint8_t> prefix(bytes.v.begin(),
                                              bytes.v.begin() + static_cast<ptrdiff_t>(length));
            auto parsed = parse_wav_header(prefix);
            write_file(path, prefix);
            auto opened = WavReader::open_path(path);
            if (length < data_offset) {
                BOOST_TEST(std::holds_alternative<std::string>(parsed));
                BOOST_TEST(std::holds_alternative<std::string>(opened));
                continue;
            }
            const WavInfo info = take(std::move(parsed));
            BOOST_TEST(info.data_offset == data_offset);
            BOOST_TEST(info.format.format == full.format.format);
            BOOST_TEST(info.format.channels == 2u);
            BOOST_TEST(info.data_bytes_known == (length == bytes.v.size()));
            BOOST_TEST(info.data_bytes == length - data_offset);
            WavReader reader = take(std::move(opened));
            BOOST_TEST(reader.info().data_offset == data_offset);
            BOOST_TEST(read_all(reader, 1).size() == (length - data_offset) / 8 * 8);
        }
    }
}

BOOST_AUTO_TEST_CASE(data_size_rules) {
    // Exact, smaller than what follows (a trailing chunk), unknown markers,
    // and larger than what follows: all but the first two mean "unknown".
    WavInfo info = parse_ok(s16_stereo_wav(8, 8));
    BOOST_TEST(info.data_bytes_known);
    BOOST_TEST(info.data_bytes == 8u);
    info = parse_ok(s16_stereo_wav(8, 20));
    BOOST_TEST(info.data_bytes_known);
    BOOST_TEST(info.data_bytes == 8u);
    for (const uint32_t declared : {0u, 0xFFFFFFFFu, 9u, 0x7FFFFFF0u}) {
        info = parse_ok(s16_stereo_wav(declared, 8));
        BOOST_TEST(!info.data_bytes_known);
        BOOST_TEST(info.data_bytes == 8u);
        BOOST_TEST(info.data_offset == 44u);
    }
    info = parse_ok(s16_stereo_wav(0xFFFFFFFF, 0));
    BOOST_TEST(!info.data_bytes_known);
    BOOST_TEST(info.data_bytes == 0u);
}

BOOST_AUTO_TEST_CASE(supported_encodings) {
    struct Case {
        std::vector<uint8_t> bytes;
        SampleFormat expected;
    };
    const Case cases[] = {
        {Bytes{}.riff().fmt(1, 1, 8000, 1, 8).data(2, 2).v, SampleFormat::u8},
        {Bytes{}.riff().fmt(1, 2, 44100, 4, 16).data(4, 4).v, SampleFormat::s16le},
        {Bytes{}.riff().fmt(1, 2, 44100, 6, 24).data(6, 6).v, SampleFormat::s24_3le},
        {Bytes{}.riff().fmt(1, 2, 44100, 8, 32).data(8, 8).v, SampleFormat::s32le},
        {Bytes{}.riff().fmt(3, 2, 44100, 8, 32).data(8, 8).v, SampleFormat::f32le},
        {Bytes{}.riff().fmt_extensible(2, 48000, 4, 16, 16, 1).data(4, 4).v, SampleFormat::s16le},
        {Bytes{}.riff().fmt_extensible(2, 48000, 6, 24, 20, 1).data(6, 6).v, SampleFormat::s24_3le},
        {Bytes{}.riff().fmt_extensible(2, 48000, 8, 32, 24, 1).data(8, 8).v, SampleFormat::s24le},
        {Bytes{}.riff().fmt_extensible(2, 48000, 8, 32, 32, 1).data(8, 8).v, SampleFormat::s32le},
        {Bytes{}.riff().fmt_extensible(2, 48000, 8, 32, 0, 1).data(8, 8).v, SampleFormat::s32le},
        {Bytes{}.riff().fmt_extensible(2, 48000, 8, 32, 32, 3).data(8, 8).v, SampleFormat::f32le},
        {Bytes{}.riff().fmt_extensible(32, 768000, 128, 32, 32, 3).data(8, 8).v,
         SampleFormat::f32le},
        // fmt chunks longer than we read, odd-sized, with their pad.
        {Bytes{}
             .riff()
             .id("fmt ")
             .u32(19)
             .u16(1)
             .u16(1)
             .u32(8000)
             .u32(16000)
             .u16(2)
             .u16(16)
             .u16(1)
             .fill(2, 0)
             .data(2, 2)
             .v,
         SampleFormat::s16le},
    };
    for (const Case& c : cases) {
        BOOST_TEST_CONTEXT(format_name(c.expected)) {
            BOOST_TEST(parse_ok(c.bytes).format.format == c.expected);
        }
    }
}

BOOST_AUTO_TEST_CASE(malformed_headers_are_refused) {
    struct Case {
        std::vector<uint8_t> bytes;
        std::string error;
    };
    const Case cases[] = {
        {{}, "truncated header"},
        {Bytes{}.id("RIFF").u32(0).id("AVI ").v, "not a RIFF/WAVE file"},
        {Bytes{}.id("OggS").fill(60, 0).v, "not a RIFF/WAVE file"},
        {Bytes{}.id("RF64").u32(0xFFFFFFFF).id("WAVE").v, "RF64 WAV files are not supported"},
        {Bytes{}.id("RIFX").u32(0).id("WAVE").v, "big-endian WAV (RIFX) is not supported"},
        {Bytes{}.riff().data(4, 4).v, "fmt chunk missing"},
        {Bytes{}.riff().chunk("LIST", 4).data(4, 4).fmt(1, 2, 48000, 4, 16).v, "fmt chunk missing"},
        {Bytes{}.riff().fmt(1, 2, 48000, 4, 16).v, "truncated header"},
        {Bytes{}.riff().fmt(1, 2, 48000, 4, 16).fmt(1, 2, 48000, 4, 16).data(4, 4).v,
         "duplicate fmt chunk"},
        {Bytes{}.riff().id("fmt ").u32(14).u16(1).u16(2).u32(48000).u32(0).u16(4).data(4, 4).v,
         "fmt chunk too small"},
        {Bytes{}.riff().fmt(0x55, 2, 48000, 4, 16).data(4, 4).v,
         "unsupported WAV encoding 0x0055 (only PCM and IEEE float)"},
        {Bytes{}.riff().fmt(2, 2, 48000, 4, 16).data(4, 4).v,
         "unsupported WAV encoding 0x0002 (only PCM and IEEE float)"},
        {Bytes{}.riff().fmt(1, 2, 48000, 3, 16).data(4, 4).v,
         "inconsistent block align 3 (expected 4)"},
        {Bytes{}.riff().fmt(1, 2, 48000, 8, 24).data(4, 4).v,
         "inconsistent block align 8 (expected 6)"},
        {Bytes{}.riff().fmt(1, 0, 48000, 0, 16).data(4, 4).v,
         "unsupported channel count 0 (1 to 32)"},
        {Bytes{}.riff().fmt(1, 33, 48000, 66, 16).data(4, 4).v,
         "unsupported channel count 33 (1 to 32)"},
        {Bytes{}.riff().fmt(1, 2, 0, 4, 16).data(4, 4).v,
         "unsupported sample rate 0 Hz (1 to 768000)"},
        {Bytes{}.riff().fmt(1, 2, 768001, 4, 16).data(4, 4).v,
         "unsupported sample rate 768001 Hz (1 to 768000)"},
        {Bytes{}.riff().fmt(1, 2, 48000, 4, 12).data(4, 4).v,
         "unsupported PCM sample size 12 bits (8, 16, 24 or 32)"},
        {Bytes{}.riff().fmt(1, 2, 48000, 0, 0).data(4, 4).v,
         "unsupported PCM sample size 0 bits (8, 16, 24 or 32)"},
        {Bytes{}.riff().fmt(3, 2, 48000, 16, 64).data(4, 4).v,
         "unsupported float sample size 64 bits (only 32)"},
        {Bytes{}.riff().fmt_extensible(2, 48000, 8, 32, 24, 1, 0x72).data(4, 4).v,
         "unsupported WAV EXTENSIBLE subformat (only PCM and IEEE float)"},
        {Bytes{}.riff().fmt_extensible(2, 48000, 8, 32, 24, 2).data(4, 4).v,
         "unsupported WAV EXTENSIBLE subformat (only PCM and IEEE float)"},
        {Bytes{}.riff().fmt_extensible(2, 48000, 4, 16, 17, 1).data(4, 4).v,
         "inconsistent bits per sample (17 valid in 16)"},
        {Bytes{}.riff().fmt_extensible(2, 48000, 8, 32, 24, 3).data(4, 4).v,
         "unsupported float sample size 24 bits (only 32)"},
        {Bytes{}.riff().fmt(0xFFFE, 2, 48000, 4, 16).data(4, 4).v,
         "EXTENSIBLE fmt chunk too small"},
        {Bytes{}.riff().chunk("LIST", 2 * 1024 * 1024).v,
         "WAV header too large (no data chunk in the first 1 MiB)"},
        {Bytes{}.riff().id("JUNK").u32(0xFFFFFFFF).v,
         "WAV header too large (no data chunk in the first 1 MiB)"},
        {Bytes{}.riff().chunk("LIST", 100).v, "truncated header"},
    };
    TempDir dir;
    const std::string path = dir.file("malformed.wav");
    for (const Case& c : cases) {
        BOOST_TEST_CONTEXT("expecting '" << c.error << "'") {
            BOOST_TEST(parse_error(c.bytes) == c.error);
            // The reader takes the same decisions (it says "empty input" for nothing at all).
            write_file(path, c.bytes);
            const std::string reader_error = error_of(WavReader::open_path(path));
            BOOST_TEST(reader_error ==
                       path + ": " +
                           (c.bytes.empty() ? "empty input (expected a WAV file)" : c.error));
        }
    }
}

BOOST_AUTO_TEST_CASE(odd_sized_chunks_are_padded) {
    Bytes padded;
    padded.riff().chunk("LIST", 3).chunk("junk", 1).fmt(1, 1, 8000, 2, 16).data(2, 2);
    const WavInfo info = parse_ok(padded.v);
    BOOST_TEST(info.data_offset == 12u + 12 + 10 + 24 + 8);
    BOOST_TEST(info.format.format == SampleFormat::s16le);

    // The same chunks without their pad bytes: the walk loses step and fails.
    Bytes unpadded;
    unpadded.riff().id("LIST").u32(3).fill(3, 0x55).fmt(1, 1, 8000, 2, 16).data(2, 2);
    BOOST_TEST(std::holds_alternative<std::string>(parse_wav_header(unpadded.v)));
}

BOOST_AUTO_TEST_CASE(random_corruptions_never_break_the_contract) {
    // A cheap in-process fuzz, beside the libFuzzer target: flip bytes of a
    // valid header and check the promises parse_wav_header makes.
    Bytes base;
    base.riff().chunk("LIST", 7).fmt_extensible(2, 48000, 8, 32, 24, 1).data(32, 32);
    uint32_t seed = 99;
    for (int round = 0; round < 20000; ++round) {
        std::vector<uint8_t> bytes = base.v;
        for (int flips = 0; flips < 1 + round % 4; ++flips) {
            seed = seed * 1664525 + 1013904223;
            bytes[(seed >> 8) % bytes.size()] = static_cast<uint8_t>(seed >> 24);
        }
        seed = seed * 1664525 + 1013904223;
        bytes.resize((seed >> 8) % (bytes.size() + 1));
        auto parsed = parse_wav_header(bytes);
        if (const auto* info = std::get_if<WavInfo>(&parsed)) {
            BOOST_REQUIRE(info->data_offset + info->data_bytes <= bytes.size());
            BOOST_REQUIRE(frame_bytes(info->format) != 0);
            BOOST_REQUIRE(info->format.rate >= 1);
            BOOST_REQUIRE(info->format.rate <= kWavMaxRate);
        } else {
            BOOST_REQUIRE(!std::get<std::string>(parsed).empty());
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()

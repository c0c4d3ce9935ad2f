#include "common/wav.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <system_error>
#include <unistd.h>
#include <utility>

namespace audiod {
namespace {

constexpr uint16_t kTagPcm = 1;
constexpr uint16_t kTagFloat = 3;
constexpr uint16_t kTagExtensible = 0xFFFE;
constexpr uint32_t kSizeUnknown = 0xFFFFFFFF;
constexpr size_t kRiffHeaderBytes = 12;
constexpr size_t kChunkHeaderBytes = 8;
constexpr size_t kFmtMinBytes = 16;
// An EXTENSIBLE fmt body, the most of any fmt chunk that we look at.
constexpr size_t kFmtExtensibleBytes = 40;
// Subformat GUIDs are xxxxxxxx-0000-0010-8000-00aa00389b71, the first field
// holding the classic format tag; these are the bytes after that field.
constexpr std::array<uint8_t, 12> kGuidTail{0x00, 0x00, 0x10, 0x00, 0x80, 0x00,
                                            0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71};
constexpr uint64_t kUnlimited = std::numeric_limits<uint64_t>::max();

uint16_t get16(const uint8_t* p) noexcept {
    return static_cast<uint16_t>(p[0] | p[1] << 8);
}

uint32_t get32(const uint8_t* p) noexcept {
    return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

void put16(uint8_t* p, uint32_t value) noexcept {
    p[0] = static_cast<uint8_t>(value);
    p[1] = static_cast<uint8_t>(value >> 8);
}

void put32(uint8_t* p, uint32_t value) noexcept {
    put16(p, value);
    put16(p + 2, value >> 16);
}

bool is_id(const uint8_t* p, const char (&id)[5]) noexcept {
    return std::memcmp(p, id, 4) == 0;
}

std::string errno_text(int error) {
    return std::generic_category().message(error);
}

// Decodes a fmt chunk body, of which `fmt` holds the first (at most 40) bytes.
std::variant<WavFormat, std::string> parse_fmt(std::span<const uint8_t> fmt) {
    if (fmt.size() < kFmtMinBytes) {
        return "fmt chunk too small";
    }
    uint32_t tag = get16(&fmt[0]);
    const uint32_t channels = get16(&fmt[2]);
    const uint32_t rate = get32(&fmt[4]);
    const uint32_t block_align = get16(&fmt[12]);
    const uint32_t container_bits = get16(&fmt[14]);
    uint32_t valid_bits = container_bits;
    const bool extensible = tag == kTagExtensible;
    if (extensible) {
        if (fmt.size() < kFmtExtensibleBytes || get16(&fmt[16]) < 22) {
            return "EXTENSIBLE fmt chunk too small";
        }
        valid_bits = get16(&fmt[18]);
        tag = get32(&fmt[24]);
        if (!std::equal(kGuidTail.begin(), kGuidTail.end(), fmt.begin() + 28) ||
            (tag != kTagPcm && tag != kTagFloat)) {
            return "unsupported WAV EXTENSIBLE subformat (only PCM and IEEE float)";
        }
        // Some writers leave it 0, meaning "all of them".
        if (valid_bits == 0) {
            valid_bits = container_bits;
        }
    }
    if (tag != kTagPcm && tag != kTagFloat) {
        char text[80];
        std::snprintf(text, sizeof text,
                      "unsupported WAV encoding 0x%04x (only PCM and IEEE float)",
                      static_cast<unsigned>(tag));
        return text;
    }
    if (channels < 1 || channels > kWavMaxChannels) {
        return "unsupported channel count " + std::to_string(channels) + " (1 to 32)";
    }
    if (rate < 1 || rate > kWavMaxRate) {
        return "unsupported sample rate " + std::to_string(rate) + " Hz (1 to 768000)";
    }
    if (valid_bits > container_bits) {
        return "inconsistent bits per sample (" + std::to_string(valid_bits) + " valid in " +
               std::to_string(container_bits) + ")";
    }
    SampleFormat format = SampleFormat::invalid;
    if (tag == kTagFloat) {
        if (container_bits != 32 || valid_bits != 32) {
            const uint32_t shown = container_bits == 32 ? valid_bits : container_bits;
            return "unsupported float sample size " + std::to_string(shown) + " bits (only 32)";
        }
        format = SampleFormat::f32le;
    } else {
        // Fewer valid bits than the container holds are the high bits, the
        // rest zero: the samples are then exactly the container's format.
        // 24 in 32 is the exception, for audiod has a name for it.
        switch (container_bits) {
        case 8:
            format = SampleFormat::u8;
            break;
        case 16:
            format = SampleFormat::s16le;
            break;
        case 24:
            format = SampleFormat::s24_3le;
            break;
        case 32:
            format = valid_bits == 24 ? SampleFormat::s24le : SampleFormat::s32le;
            break;
        default:
            return "unsupported PCM sample size " + std::to_string(container_bits) +
                   " bits (8, 16, 24 or 32)";
        }
    }
    const uint32_t expected_align = channels * sample_bytes(format);
    if (block_align != expected_align) {
        return "inconsistent block align " + std::to_string(block_align) + " (expected " +
               std::to_string(expected_align) + ")";
    }
    return WavFormat{format, rate, channels};
}

// Walks the chunks of a RIFF/WAVE header, fed any number of bytes at a time,
// up to the first sample byte. Holds only fixed-size state.
class HeaderScanner {
public:
    enum class State { running, found_data, failed };

    // Consumes bytes up to the first sample byte, or up to the byte that
    // made it fail; returns how many.
    size_t feed(std::span<const uint8_t> bytes) {
        size_t used = 0;
        while (state_ == State::running && used < bytes.size()) {
            const size_t available = bytes.size() - used;
            size_t take = 0;
            if (step_ == Step::skip) {
                take = static_cast<size_t>(std::min<uint64_t>(skip_left_, available));
                skip_left_ -= take;
            } else {
                take = std::min(piece_need_ - piece_len_, available);
                std::memcpy(piece_.data() + piece_len_, bytes.data() + used, take);
                piece_len_ += take;
            }
            used += take;
            offset_ += take;
            if (step_ == Step::skip ? skip_left_ == 0 : piece_len_ == piece_need_) {
                on_step_done();
            }
        }
        return used;
    }

    [[nodiscard]] State state() const noexcept { return state_; }
    [[nodiscard]] std::string take_error() noexcept { return std::move(error_); }
    [[nodiscard]] const WavFormat& format() const noexcept { return format_; }
    // Bytes consumed; once found_data, the offset of the first sample byte.
    [[nodiscard]] uint64_t offset() const noexcept { return offset_; }
    [[nodiscard]] uint32_t declared_data_size() const noexcept { return data_size_; }

private:
    enum class Step { riff, chunk_header, fmt_body, skip };

    void collect(Step step, size_t bytes) noexcept {
        step_ = step;
        piece_len_ = 0;
        piece_need_ = bytes;
    }

    void skip(uint64_t bytes) noexcept {
        if (bytes == 0) {
            collect(Step::chunk_header, kChunkHeaderBytes);
        } else {
            step_ = Step::skip;
            skip_left_ = bytes;
        }
    }

    void fail(std::string message) {
        state_ = State::failed;
        error_ = std::move(message);
    }

    void on_step_done() {
        const uint8_t* p = piece_.data();
        switch (step_) {
        case Step::riff:
            // The RIFF size is not checked: files cut off by a crash or
            // streamed on a pipe have a wrong one, and nothing needs it.
            if (is_id(p, "RF64")) {
                fail("RF64 WAV files are not supported");
            } else if (is_id(p, "RIFX")) {
                fail("big-endian WAV (RIFX) is not supported");
            } else if (!is_id(p, "RIFF") || !is_id(p + 8, "WAVE")) {
                fail("not a RIFF/WAVE file");
            } else {
                collect(Step::chunk_header, kChunkHeaderBytes);
            }
            break;
        case Step::chunk_header:
            on_chunk_header(p);
            break;
        case Step::fmt_body: {
            auto parsed = parse_fmt({piece_.data(), piece_len_});
            if (auto* error = std::get_if<std::string>(&parsed)) {
                fail(std::move(*error));
                return;
            }
            format_ = std::get<WavFormat>(parsed);
            have_fmt_ = true;
            skip(fmt_rest_);
            break;
        }
        case Step::skip:
            collect(Step::chunk_header, kChunkHeaderBytes);
            break;
        }
    }

    void on_chunk_header(const uint8_t* p) {
        const uint32_t size = get32(p + 4);
        if (is_id(p, "data")) {
            if (!have_fmt_) {
                fail("fmt chunk missing");
                return;
            }
            data_size_ = size;
            state_ = State::found_data;
            return;
        }
        // A chunk of odd size is followed by a pad byte its size leaves out.
        const uint64_t padded = uint64_t{size} + (size & 1);
        if (offset_ + padded > kWavMaxHeaderBytes) {
            fail("WAV header too large (no data chunk in the first 1 MiB)");
            return;
        }
        if (!is_id(p, "fmt ")) {
            skip(padded);
            return;
        }
        if (have_fmt_) {
            fail("duplicate fmt chunk");
            return;
        }
        const size_t keep = std::min<size_t>(size, kFmtExtensibleBytes);
        if (keep < kFmtMinBytes) {
            fail("fmt chunk too small");
            return;
        }
        fmt_rest_ = padded - keep;
        collect(Step::fmt_body, keep);
    }

    State state_ = State::running;
    Step step_ = Step::riff;
    std::array<uint8_t, kFmtExtensibleBytes> piece_{};
    size_t piece_len_ = 0;
    size_t piece_need_ = kRiffHeaderBytes;
    uint64_t skip_left_ = 0;
    uint64_t fmt_rest_ = 0;
    uint64_t offset_ = 0;
    bool have_fmt_ = false;
    WavFormat format_;
    uint32_t data_size_ = 0;
    std::string error_;
};

bool size_is_unknown(uint32_t declared) noexcept {
    return declared == 0 || declared == kSizeUnknown;
}

// s24le keeps its 24 bits low in the container; WAV keeps them high.
void s24_from_wav(uint8_t* bytes, size_t count) noexcept {
    for (size_t i = 0; i + 4 <= count; i += 4) {
        const auto sample = static_cast<int32_t>(get32(bytes + i));
        put32(bytes + i, static_cast<uint32_t>(sample >> 8));
    }
}

void s24_to_wav(const uint8_t* from, uint8_t* to, size_t count) noexcept {
    for (size_t i = 0; i + 4 <= count; i += 4) {
        put32(to + i, get32(from + i) << 8);
    }
}

struct HeaderBytes {
    std::array<uint8_t, 68> bytes{};
    size_t size = 0;
};

// The header for `data_bytes` of samples, plus a pad byte after them if `padded`.
HeaderBytes build_header(const WavFormat& format, uint64_t data_bytes, bool padded) noexcept {
    const bool is_float = format.format == SampleFormat::f32le;
    const bool extensible = format.format == SampleFormat::s24le;
    const uint32_t sample = sample_bytes(format.format);
    const uint32_t align = frame_bytes(format);
    HeaderBytes h;
    uint8_t* p = h.bytes.data();
    const auto chunk = [&](const char(&id)[5], uint32_t size) {
        std::memcpy(p + h.size, id, 4);
        put32(p + h.size + 4, size);
        h.size += kChunkHeaderBytes;
    };
    chunk("RIFF", 0); // size filled in below
    std::memcpy(p + h.size, "WAVE", 4);
    h.size += 4;
    // Non-PCM fmt chunks carry a cbSize field; EXTENSIBLE adds 22 bytes.
    const uint32_t fmt_size = extensible ? 40 : is_float ? 18 : 16;
    chunk("fmt ", fmt_size);
    uint8_t* fmt = p + h.size;
    put16(fmt, extensible ? kTagExtensible : is_float ? kTagFloat : kTagPcm);
    put16(fmt + 2, format.channels);
    put32(fmt + 4, format.rate);
    put32(fmt + 8, format.rate * align);
    put16(fmt + 12, align);
    put16(fmt + 14, sample * 8);
    if (extensible) {
        put16(fmt + 16, 22);
        put16(fmt + 18, 24);
        put32(fmt + 20, 0); // no channel mask: we do not know the speakers
        put32(fmt + 24, kTagPcm);
        std::copy(kGuidTail.begin(), kGuidTail.end(), fmt + 28);
    }
    h.size += fmt_size;
    if (is_float) {
        // Required for non-PCM data: the frame count.
        chunk("fact", 4);
        put32(p + h.size, static_cast<uint32_t>(data_bytes / align));
        h.size += 4;
    }
    chunk("data", static_cast<uint32_t>(data_bytes));
    put32(p + 4, static_cast<uint32_t>(h.size - 8 + data_bytes + (padded ? 1 : 0)));
    return h;
}

// Writes all of `bytes` at the file offset, adding to `written` as they land
// (so that after a failure midway the caller still knows what the file holds).
int write_all(int fd, const uint8_t* bytes, size_t count, uint64_t& written) noexcept {
    while (count > 0) {
        const ssize_t n = ::write(fd, bytes, count);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return n < 0 ? -errno : -EIO;
        }
        written += static_cast<size_t>(n);
        bytes += n;
        count -= static_cast<size_t>(n);
    }
    return 0;
}

bool format_is_writable(const WavFormat& format) noexcept {
    return frame_bytes(format) != 0 && format.rate >= 1 && format.rate <= kWavMaxRate;
}

} // namespace

uint32_t frame_bytes(const WavFormat& format) noexcept {
    if (format.channels < 1 || format.channels > kWavMaxChannels) {
        return 0;
    }
    return sample_bytes(format.format) * format.channels;
}

std::variant<WavInfo, std::string> parse_wav_header(std::span<const uint8_t> bytes) {
    HeaderScanner scanner;
    const size_t used = scanner.feed(bytes);
    switch (scanner.state()) {
    case HeaderScanner::State::failed:
        return scanner.take_error();
    case HeaderScanner::State::running:
        return "truncated header";
    case HeaderScanner::State::found_data:
        break;
    }
    WavInfo info;
    info.format = scanner.format();
    info.data_offset = used;
    const uint64_t available = bytes.size() - used;
    const uint32_t declared = scanner.declared_data_size();
    info.data_bytes_known = !size_is_unknown(declared) && declared <= available;
    info.data_bytes = info.data_bytes_known ? declared : available;
    return info;
}

// ---- WavReader ----

std::variant<WavReader, std::string> WavReader::open(int fd) {
    if (fd < 0) {
        return "invalid file descriptor";
    }
    WavReader reader;
    reader.borrowed_fd_ = fd;
    if (auto error = reader.read_header()) {
        return std::move(*error);
    }
    return reader;
}

std::variant<WavReader, std::string> WavReader::open_path(const std::string& path) {
    WavReader reader;
    reader.owned_.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!reader.owned_) {
        return "cannot open '" + path + "': " + errno_text(errno);
    }
    if (auto error = reader.read_header()) {
        return path + ": " + *error;
    }
    return reader;
}

std::optional<std::string> WavReader::read_header() {
    HeaderScanner scanner;
    std::array<uint8_t, 4096> buffer;
    for (;;) {
        const ssize_t got = ::read(fd(), buffer.data(), buffer.size());
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            return "cannot read WAV header: " + errno_text(errno);
        }
        if (got == 0) {
            return scanner.offset() == 0 ? "empty input (expected a WAV file)" : "truncated header";
        }
        const size_t used = scanner.feed({buffer.data(), static_cast<size_t>(got)});
        if (scanner.state() == HeaderScanner::State::failed) {
            return scanner.take_error();
        }
        if (scanner.state() == HeaderScanner::State::found_data) {
            // What came with the header's last read is the first samples.
            pending_.assign(buffer.begin() + static_cast<ptrdiff_t>(used), buffer.begin() + got);
            break;
        }
    }
    info_.format = scanner.format();
    info_.data_offset = scanner.offset();
    // Without seeking we cannot compare the declared size with the file's;
    // a stream that ends sooner just ends the data sooner.
    const uint32_t declared = scanner.declared_data_size();
    info_.data_bytes_known = !size_is_unknown(declared);
    info_.data_bytes = info_.data_bytes_known ? declared : 0;
    data_left_ = info_.data_bytes_known ? declared : kUnlimited;
    frame_bytes_ = frame_bytes(info_.format);
    return std::nullopt;
}

long WavReader::read_frames(void* dest, size_t max_frames) {
    if (deferred_error_ != 0) {
        return std::exchange(deferred_error_, 0);
    }
    // Bounded so that byte counts fit ssize_t and frame counts fit long.
    constexpr uint64_t kMaxBytesPerCall = uint64_t{1} << 30;
    const uint64_t frames = std::min(
        {uint64_t{max_frames}, kMaxBytesPerCall / frame_bytes_, data_left_ / frame_bytes_});
    const auto want = static_cast<size_t>(frames * frame_bytes_);
    auto* out = static_cast<uint8_t*>(dest);

    size_t got = std::min(pending_.size() - pending_pos_, want);
    if (got > 0) {
        std::memcpy(out, pending_.data() + pending_pos_, got);
        pending_pos_ += got;
    }
    if (pending_pos_ == pending_.size()) {
        pending_.clear();
        pending_pos_ = 0;
    }
    int error = 0;
    while (got < want && !eof_) {
        const ssize_t n = ::read(fd(), out + got, want - got);
        if (n > 0) {
            got += static_cast<size_t>(n);
        } else if (n == 0) {
            eof_ = true;
        } else if (errno != EINTR) {
            error = -errno;
            break;
        }
    }
    const size_t whole = got - got % frame_bytes_;
    if (error != 0 && got > whole) {
        // pending_ is empty here: reading starts only once it is used up.
        pending_.assign(out + whole, out + got);
    }
    if (data_left_ != kUnlimited) {
        data_left_ -= whole;
    }
    if (info_.format.format == SampleFormat::s24le) {
        s24_from_wav(out, whole);
    }
    if (error != 0 && whole == 0) {
        return error;
    }
    deferred_error_ = error;
    return static_cast<long>(whole / frame_bytes_);
}

// ---- WavWriter ----

std::variant<WavWriter, std::string> WavWriter::create(const std::string& path, WavFormat format) {
    if (!format_is_writable(format)) {
        return "cannot write a WAV of " + std::string(format_name(format.format)) + ", " +
               std::to_string(format.channels) + " channels, " + std::to_string(format.rate) +
               " Hz";
    }
    WavWriter writer;
    writer.fd_.reset(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!writer.fd_) {
        return "cannot create '" + path + "': " + errno_text(errno);
    }
    writer.format_ = format;
    writer.limit_ = max_data_bytes(format);
    // Written through the file offset (pwrite would leave it at 0), so that
    // appended samples follow the header.
    const HeaderBytes header = build_header(format, 0, false);
    uint64_t written = 0;
    if (const int error = write_all(writer.fd_.get(), header.bytes.data(), header.size, written);
        error != 0) {
        writer.fd_.reset(); // nothing worth finishing
        return "cannot write '" + path + "': " + errno_text(-error);
    }
    return writer;
}

uint64_t WavWriter::max_data_bytes(const WavFormat& format) noexcept {
    const uint32_t frame = frame_bytes(format);
    if (frame == 0) {
        return 0;
    }
    // The RIFF size counts the header after its first 8 bytes, the samples
    // and a pad byte; bounding by the whole header leaves room for the pad.
    const uint64_t room = kSizeUnknown - build_header(format, 0, false).size;
    return room - room % frame;
}

WavWriter& WavWriter::operator=(WavWriter&& other) noexcept {
    if (this != &other) {
        finish();
        fd_ = std::move(other.fd_);
        format_ = other.format_;
        data_bytes_ = other.data_bytes_;
        limit_ = other.limit_;
    }
    return *this;
}

WavWriter::~WavWriter() {
    finish();
}

int WavWriter::append(const void* data, size_t bytes) {
    if (!fd_) {
        return -EBADF;
    }
    if (bytes % frame_bytes(format_) != 0) {
        return -EINVAL;
    }
    if (bytes > limit_ - data_bytes_) {
        return -EFBIG;
    }
    const auto* from = static_cast<const uint8_t*>(data);
    if (format_.format != SampleFormat::s24le) {
        return write_all(fd_.get(), from, bytes, data_bytes_);
    }
    std::array<uint8_t, 4096> block;
    while (bytes > 0) {
        const size_t count = std::min(bytes, block.size());
        s24_to_wav(from, block.data(), count);
        if (const int error = write_all(fd_.get(), block.data(), count, data_bytes_); error != 0) {
            return error;
        }
        from += count;
        bytes -= count;
    }
    return 0;
}

int WavWriter::flush_header() {
    if (!fd_) {
        return -EBADF;
    }
    return write_header(false);
}

int WavWriter::write_header(bool padded) noexcept {
    const HeaderBytes header = build_header(format_, data_bytes_, padded);
    size_t done = 0;
    while (done < header.size) {
        const ssize_t n = ::pwrite(fd_.get(), header.bytes.data() + done, header.size - done,
                                   static_cast<off_t>(done));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return n < 0 ? -errno : -EIO;
        }
        done += static_cast<size_t>(n);
    }
    return 0;
}

int WavWriter::finish() {
    if (!fd_) {
        return 0;
    }
    int error = 0;
    bool padded = false;
    if (data_bytes_ % 2 != 0) {
        const uint8_t pad = 0;
        uint64_t pad_written = 0;
        error = write_all(fd_.get(), &pad, 1, pad_written);
        padded = pad_written == 1;
    }
    const int header_error = write_header(padded);
    if (error == 0) {
        error = header_error;
    }
    if (::close(fd_.release()) != 0 && error == 0) {
        error = -errno;
    }
    return error;
}

void WavWriter::lower_limit_for_testing(uint64_t max_bytes) noexcept {
    limit_ = std::max(data_bytes_, std::min(limit_, max_bytes));
}

} // namespace audiod

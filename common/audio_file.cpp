#include "common/audio_file.h"

#include <sndfile.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unistd.h>
#include <vector>

namespace audiod {

namespace {

std::string lowercase(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) {
        return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    });
    return text;
}

// libsndfile's name for a major format or subtype code.
std::string format_info_name(int command, int code) {
    SF_FORMAT_INFO info{};
    info.format = code;
    if (sf_command(nullptr, command, &info, sizeof info) != 0 || info.name == nullptr) {
        return "unknown";
    }
    return info.name;
}

// The audiod format a reader delivers a file's frames in.
SampleFormat delivered_format(int sf_format) {
    switch (sf_format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_S8:
    case SF_FORMAT_PCM_U8:
    case SF_FORMAT_PCM_16:
    case SF_FORMAT_ULAW:
    case SF_FORMAT_ALAW:
        return SampleFormat::s16le;
    case SF_FORMAT_PCM_24:
    case SF_FORMAT_PCM_32:
        return SampleFormat::s32le;
    default:
        return SampleFormat::f32le; // float, double and every lossy encoding
    }
}

// The libsndfile subtype a writer stores `format` as.
int stored_subtype(SampleFormat format, Container container) {
    if (container == Container::flac) {
        switch (format) {
        case SampleFormat::u8:
            return SF_FORMAT_PCM_S8;
        case SampleFormat::s16le:
            return SF_FORMAT_PCM_16;
        default:
            return SF_FORMAT_PCM_24; // FLAC holds at most 24 bits
        }
    }
    switch (format) {
    case SampleFormat::u8:
        return SF_FORMAT_PCM_U8;
    case SampleFormat::s16le:
        return SF_FORMAT_PCM_16;
    case SampleFormat::s24le:
    case SampleFormat::s24_3le:
        return SF_FORMAT_PCM_24;
    case SampleFormat::s32le:
        return SF_FORMAT_PCM_32;
    default:
        return SF_FORMAT_FLOAT;
    }
}

// Bytes a WAV stores a frame of `format` in (24-bit samples take three).
uint64_t stored_frame_bytes(const AudioFormat& format) {
    const uint32_t sample = format.format == SampleFormat::s24le ? 3 : sample_bytes(format.format);
    return uint64_t{sample} * format.channels;
}

} // namespace

uint32_t frame_bytes(const AudioFormat& format) noexcept {
    return sample_bytes(format.format) * format.channels;
}

Container container_for(const std::string& path) noexcept {
    const std::string lower = lowercase(path);
    return lower.size() >= 5 && lower.ends_with(".flac") ? Container::flac : Container::wav;
}

std::optional<Container> parse_container(const std::string& name) noexcept {
    if (name == "wav") {
        return Container::wav;
    }
    if (name == "flac") {
        return Container::flac;
    }
    return std::nullopt;
}

// ---- reading ----------------------------------------------------------------

struct AudioFileReader::File {
    SNDFILE* sf = nullptr;
    ~File() {
        if (sf != nullptr) {
            sf_close(sf);
        }
    }
};

AudioFileReader::AudioFileReader(AudioFileReader&&) noexcept = default;
AudioFileReader& AudioFileReader::operator=(AudioFileReader&&) noexcept = default;
AudioFileReader::~AudioFileReader() = default;

std::variant<AudioFileReader, std::string> AudioFileReader::open(const std::string& path) {
    SF_INFO info{};
    auto file = std::make_unique<File>();
    file->sf = path == "-" ? sf_open_fd(STDIN_FILENO, SFM_READ, &info, SF_FALSE)
                           : sf_open(path.c_str(), SFM_READ, &info);
    if (file->sf == nullptr) {
        return std::string(sf_strerror(nullptr));
    }
    if (info.channels < 1 || info.samplerate < 1) {
        return std::string("no audio in it (") + std::to_string(info.channels) + " channels at " +
               std::to_string(info.samplerate) + " Hz)";
    }
    AudioFileReader reader;
    reader.file_ = std::move(file);
    reader.format_ = {delivered_format(info.format), static_cast<uint32_t>(info.samplerate),
                      static_cast<uint32_t>(info.channels)};
    if (info.frames > 0 && info.frames != SF_COUNT_MAX) {
        reader.frames_ = static_cast<uint64_t>(info.frames);
    }
    reader.description_ = format_info_name(SFC_GET_FORMAT_MAJOR, info.format & SF_FORMAT_TYPEMASK) +
                          ", " +
                          format_info_name(SFC_GET_FORMAT_SUBTYPE, info.format & SF_FORMAT_SUBMASK);
    return reader;
}

long AudioFileReader::read_frames(void* dest, size_t max_frames) {
    const auto count = static_cast<sf_count_t>(max_frames);
    sf_count_t got = 0;
    switch (format_.format) {
    case SampleFormat::s16le:
        got = sf_readf_short(file_->sf, static_cast<short*>(dest), count);
        break;
    case SampleFormat::s32le:
        got = sf_readf_int(file_->sf, static_cast<int*>(dest), count);
        break;
    default:
        got = sf_readf_float(file_->sf, static_cast<float*>(dest), count);
        break;
    }
    if (got == 0 && sf_error(file_->sf) != SF_ERR_NO_ERROR) {
        return -EIO;
    }
    return static_cast<long>(got);
}

// ---- writing ----------------------------------------------------------------

struct AudioFileWriter::File {
    SNDFILE* sf = nullptr;
    // Samples widened for libsndfile (u8 to short, 24-bit to int).
    std::vector<short> shorts;
    std::vector<int> ints;
    ~File() {
        if (sf != nullptr) {
            sf_close(sf);
        }
    }
};

AudioFileWriter::AudioFileWriter(AudioFileWriter&&) noexcept = default;

AudioFileWriter& AudioFileWriter::operator=(AudioFileWriter&& other) noexcept {
    if (this != &other) {
        finish();
        file_ = std::move(other.file_);
        format_ = other.format_;
        container_ = other.container_;
        frames_ = other.frames_;
        wav_limit_ = other.wav_limit_;
    }
    return *this;
}

AudioFileWriter::~AudioFileWriter() {
    finish();
}

std::variant<AudioFileWriter, std::string>
AudioFileWriter::create(const std::string& path, AudioFormat format, Container container) {
    if (sample_bytes(format.format) == 0 || format.channels < 1 || format.rate < 1) {
        return std::string("invalid format for a file: ") +
               std::string(format_name(format.format)) + " " + std::to_string(format.rate) +
               " Hz " + std::to_string(format.channels) + " channels";
    }
    SF_INFO info{};
    info.samplerate = static_cast<int>(format.rate);
    info.channels = static_cast<int>(format.channels);
    info.format = (container == Container::flac ? SF_FORMAT_FLAC : SF_FORMAT_WAV) |
                  stored_subtype(format.format, container);
    if (sf_format_check(&info) == SF_FALSE) {
        return std::string(container == Container::flac ? "FLAC" : "WAV") + " cannot hold " +
               std::to_string(format.channels) + " channels at " + std::to_string(format.rate) +
               " Hz";
    }
    auto file = std::make_unique<File>();
    file->sf = sf_open(path.c_str(), SFM_WRITE, &info);
    if (file->sf == nullptr) {
        return std::string(sf_strerror(nullptr));
    }
    // A float WAV's PEAK chunk would be one more thing to rewrite at every
    // header flush, and a crash could leave it stale.
    sf_command(file->sf, SFC_SET_ADD_PEAK_CHUNK, nullptr, SF_FALSE);
    AudioFileWriter writer;
    writer.file_ = std::move(file);
    writer.format_ = format;
    writer.container_ = container;
    return writer;
}

int AudioFileWriter::append(const void* data, size_t bytes) {
    if (!file_) {
        return -EBADF;
    }
    const uint32_t frame = frame_bytes(format_);
    if (bytes % frame != 0) {
        return -EINVAL;
    }
    const size_t frames = bytes / frame;
    const size_t samples = frames * format_.channels;
    if (container_ == Container::wav &&
        (frames_ + frames) * stored_frame_bytes(format_) > wav_limit_) {
        return -EFBIG; // nothing written: the file stays a valid WAV
    }
    const auto count = static_cast<sf_count_t>(frames);
    const auto* in = static_cast<const uint8_t*>(data);
    sf_count_t written = 0;
    switch (format_.format) {
    case SampleFormat::s16le:
        written = sf_writef_short(file_->sf, reinterpret_cast<const short*>(in), count);
        break;
    case SampleFormat::f32le:
        written = sf_writef_float(file_->sf, reinterpret_cast<const float*>(in), count);
        break;
    case SampleFormat::s32le:
        written = sf_writef_int(file_->sf, reinterpret_cast<const int*>(in), count);
        break;
    case SampleFormat::u8:
        file_->shorts.resize(samples);
        for (size_t i = 0; i < samples; ++i) {
            file_->shorts[i] = static_cast<short>((int{in[i]} - 128) * 256);
        }
        written = sf_writef_short(file_->sf, file_->shorts.data(), count);
        break;
    default: {
        // 24-bit samples, in the low bits of 4 bytes (s24le) or packed in 3
        // (s24_3le), to the high bits of an int as libsndfile takes them.
        const size_t step = sample_bytes(format_.format);
        file_->ints.resize(samples);
        for (size_t i = 0; i < samples; ++i) {
            const uint8_t* s = in + i * step;
            const uint32_t value =
                uint32_t{s[0]} << 8 | uint32_t{s[1]} << 16 | uint32_t{s[2]} << 24;
            file_->ints[i] = static_cast<int>(value);
        }
        written = sf_writef_int(file_->sf, file_->ints.data(), count);
        break;
    }
    }
    if (written > 0) {
        frames_ += static_cast<uint64_t>(written);
    }
    return written == count ? 0 : -EIO;
}

int AudioFileWriter::flush_header() {
    if (!file_) {
        return -EBADF;
    }
    if (container_ == Container::wav) {
        sf_command(file_->sf, SFC_UPDATE_HEADER_NOW, nullptr, 0);
    }
    return sf_error(file_->sf) == SF_ERR_NO_ERROR ? 0 : -EIO;
}

int AudioFileWriter::finish() {
    if (!file_) {
        return 0;
    }
    const int rc = sf_close(file_->sf);
    file_->sf = nullptr;
    file_.reset();
    return rc == 0 ? 0 : -EIO;
}

} // namespace audiod

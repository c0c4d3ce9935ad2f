// Audio files through libsndfile (common/audio_file.h): every audiod sample
// format to WAV and FLAC and back, sample for sample; the container chosen by
// the name; a WAV readable up to its last header flush, as after a crash;
// and bad files refused with a reason.
#include "common/audio_file.h"
#include "unit/scratch_dir.h"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

using namespace audiod;
using audiod::test::ScratchDir;

namespace {

// The reason a creation or opening failed ("" when it did not).
template <class Result>
std::string reason(const Result& result) {
    const auto* message = std::get_if<std::string>(&result);
    return message != nullptr ? *message : "";
}

// Writes `bytes` of `format` to PATH in `container` and finishes it.
void write_file(const std::string& path, AudioFormat format, Container container,
                const std::vector<uint8_t>& bytes) {
    auto created = AudioFileWriter::create(path, format, container);
    BOOST_REQUIRE_MESSAGE(std::holds_alternative<AudioFileWriter>(created), reason(created));
    auto& writer = std::get<AudioFileWriter>(created);
    BOOST_REQUIRE_EQUAL(writer.append(bytes.data(), bytes.size()), 0);
    BOOST_CHECK_EQUAL(writer.frames(), bytes.size() / frame_bytes(format));
    BOOST_REQUIRE_EQUAL(writer.finish(), 0);
}

// Every frame of PATH as its reader delivers it, with the format it uses.
std::vector<uint8_t> read_file(const std::string& path, AudioFormat* format) {
    auto opened = AudioFileReader::open(path);
    BOOST_REQUIRE_MESSAGE(std::holds_alternative<AudioFileReader>(opened), reason(opened));
    auto& reader = std::get<AudioFileReader>(opened);
    *format = reader.format();
    const uint32_t frame = frame_bytes(reader.format());
    std::vector<uint8_t> out;
    std::vector<uint8_t> chunk(size_t{frame} * 1000);
    for (long n = 0; (n = reader.read_frames(chunk.data(), 1000)) > 0;) {
        out.insert(out.end(), chunk.begin(), chunk.begin() + n * frame);
    }
    return out;
}

template <class T>
std::vector<T> as(const std::vector<uint8_t>& bytes) {
    std::vector<T> out(bytes.size() / sizeof(T));
    std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
}

// A ramp of 24-bit values across the range, one per sample.
std::vector<int32_t> values_24(size_t count) {
    std::vector<int32_t> out(count);
    for (size_t i = 0; i < count; ++i) {
        out[i] = static_cast<int32_t>((i * 2654435761u) % (1u << 24)) - (1 << 23);
    }
    return out;
}

constexpr size_t kFrames = 4000;
constexpr uint32_t kChannels = 2;

} // namespace

BOOST_AUTO_TEST_SUITE(audio_file)

BOOST_AUTO_TEST_CASE(every_sample_format_survives_a_wav_sample_for_sample) {
    ScratchDir dir;
    const size_t samples = kFrames * kChannels;
    const auto v24 = values_24(samples);
    // u8: every value; delivered as s16 with the value in the top byte.
    {
        std::vector<uint8_t> in(samples);
        for (size_t i = 0; i < samples; ++i) {
            in[i] = static_cast<uint8_t>(i);
        }
        write_file(dir.file("u8.wav"), {SampleFormat::u8, 8000, kChannels}, Container::wav, in);
        AudioFormat format;
        const auto out = as<int16_t>(read_file(dir.file("u8.wav"), &format));
        BOOST_CHECK(format.format == SampleFormat::s16le);
        BOOST_REQUIRE_EQUAL(out.size(), samples);
        for (size_t i = 0; i < samples; ++i) {
            BOOST_REQUIRE_EQUAL(out[i], (int{in[i]} - 128) * 256);
        }
    }
    // s16: exact.
    {
        std::vector<int16_t> in(samples);
        for (size_t i = 0; i < samples; ++i) {
            in[i] = static_cast<int16_t>(v24[i] >> 8);
        }
        std::vector<uint8_t> bytes(samples * 2);
        std::memcpy(bytes.data(), in.data(), bytes.size());
        write_file(dir.file("s16.wav"), {SampleFormat::s16le, 44100, kChannels}, Container::wav,
                   bytes);
        AudioFormat format;
        const auto out = as<int16_t>(read_file(dir.file("s16.wav"), &format));
        BOOST_CHECK(format.format == SampleFormat::s16le);
        BOOST_CHECK_EQUAL(format.rate, 44100u);
        BOOST_CHECK_EQUAL(format.channels, kChannels);
        BOOST_CHECK(out == in);
    }
    // s24le and s24_3le: exact, delivered as s32 (the 24 bits at the top).
    for (const SampleFormat f : {SampleFormat::s24le, SampleFormat::s24_3le}) {
        const size_t width = sample_bytes(f);
        std::vector<uint8_t> bytes(samples * width);
        for (size_t i = 0; i < samples; ++i) {
            const auto u = static_cast<uint32_t>(v24[i]) & 0xffffffu;
            std::memcpy(bytes.data() + i * width, &u, 3);
            if (width == 4) {
                bytes[i * width + 3] = (u & 0x800000u) ? 0xff : 0; // sign-extended container
            }
        }
        write_file(dir.file("s24.wav"), {f, 48000, kChannels}, Container::wav, bytes);
        AudioFormat format;
        const auto out = as<int32_t>(read_file(dir.file("s24.wav"), &format));
        BOOST_CHECK(format.format == SampleFormat::s32le);
        BOOST_REQUIRE_EQUAL(out.size(), samples);
        for (size_t i = 0; i < samples; ++i) {
            BOOST_REQUIRE_EQUAL(out[i], static_cast<int32_t>(static_cast<uint32_t>(v24[i]) << 8));
        }
    }
    // s32 and f32: exact.
    {
        std::vector<int32_t> in(samples);
        std::mt19937 rng(7);
        for (auto& s : in) {
            s = static_cast<int32_t>(rng());
        }
        std::vector<uint8_t> bytes(samples * 4);
        std::memcpy(bytes.data(), in.data(), bytes.size());
        write_file(dir.file("s32.wav"), {SampleFormat::s32le, 96000, kChannels}, Container::wav,
                   bytes);
        AudioFormat format;
        BOOST_CHECK(as<int32_t>(read_file(dir.file("s32.wav"), &format)) == in);
        BOOST_CHECK(format.format == SampleFormat::s32le);
    }
    {
        std::vector<float> in(samples);
        for (size_t i = 0; i < samples; ++i) {
            in[i] = static_cast<float>(std::sin(0.01 * double(i)) * 0.9);
        }
        std::vector<uint8_t> bytes(samples * 4);
        std::memcpy(bytes.data(), in.data(), bytes.size());
        write_file(dir.file("f32.wav"), {SampleFormat::f32le, 48000, kChannels}, Container::wav,
                   bytes);
        AudioFormat format;
        BOOST_CHECK(as<float>(read_file(dir.file("f32.wav"), &format)) == in);
        BOOST_CHECK(format.format == SampleFormat::f32le);
    }
}

BOOST_AUTO_TEST_CASE(flac_keeps_16_and_24_bits_exactly) {
    ScratchDir dir;
    const size_t samples = kFrames * kChannels;
    const auto v24 = values_24(samples);
    std::vector<int16_t> in16(samples);
    for (size_t i = 0; i < samples; ++i) {
        in16[i] = static_cast<int16_t>(v24[i] >> 8);
    }
    std::vector<uint8_t> bytes(samples * 2);
    std::memcpy(bytes.data(), in16.data(), bytes.size());
    write_file(dir.file("a.flac"), {SampleFormat::s16le, 48000, kChannels}, Container::flac, bytes);
    AudioFormat format;
    BOOST_CHECK(as<int16_t>(read_file(dir.file("a.flac"), &format)) == in16);
    BOOST_CHECK(format.format == SampleFormat::s16le);

    std::vector<uint8_t> b24(samples * 3);
    for (size_t i = 0; i < samples; ++i) {
        const auto u = static_cast<uint32_t>(v24[i]);
        std::memcpy(b24.data() + i * 3, &u, 3);
    }
    write_file(dir.file("b.flac"), {SampleFormat::s24_3le, 48000, kChannels}, Container::flac, b24);
    const auto out = as<int32_t>(read_file(dir.file("b.flac"), &format));
    BOOST_CHECK(format.format == SampleFormat::s32le);
    BOOST_REQUIRE_EQUAL(out.size(), samples);
    for (size_t i = 0; i < samples; ++i) {
        BOOST_REQUIRE_EQUAL(out[i], static_cast<int32_t>(static_cast<uint32_t>(v24[i]) << 8));
    }
    // Float goes in as 24 bits: within one 24-bit step.
    std::vector<float> fin(samples);
    for (size_t i = 0; i < samples; ++i) {
        fin[i] = static_cast<float>(std::sin(0.003 * double(i)) * 0.5);
    }
    std::vector<uint8_t> bf(samples * 4);
    std::memcpy(bf.data(), fin.data(), bf.size());
    write_file(dir.file("c.flac"), {SampleFormat::f32le, 48000, kChannels}, Container::flac, bf);
    const auto fout = as<int32_t>(read_file(dir.file("c.flac"), &format));
    BOOST_REQUIRE_EQUAL(fout.size(), samples);
    for (size_t i = 0; i < samples; ++i) {
        BOOST_REQUIRE_LE(std::fabs(fout[i] / 2147483648.0 - fin[i]), 2.0 / (1 << 23));
    }
}

BOOST_AUTO_TEST_CASE(the_name_chooses_the_container) {
    BOOST_CHECK(container_for("take.flac") == Container::flac);
    BOOST_CHECK(container_for("/a/B.FLAC") == Container::flac);
    BOOST_CHECK(container_for("take.wav") == Container::wav);
    BOOST_CHECK(container_for("take") == Container::wav);
    BOOST_CHECK(container_for(".flac.wav") == Container::wav);
    BOOST_CHECK(parse_container("flac") == Container::flac);
    BOOST_CHECK(parse_container("wav") == Container::wav);
    BOOST_CHECK(!parse_container("mp3"));
    ScratchDir dir;
    write_file(dir.file("x.flac"), {SampleFormat::s16le, 48000, 1}, container_for("x.flac"),
               std::vector<uint8_t>(200));
    std::ifstream in(dir.file("x.flac"), std::ios::binary);
    char magic[4] = {};
    in.read(magic, 4);
    BOOST_CHECK(std::memcmp(magic, "fLaC", 4) == 0);
}

BOOST_AUTO_TEST_CASE(a_wav_is_readable_up_to_its_last_flush_as_after_a_crash) {
    ScratchDir dir;
    const std::string path = dir.file("live.wav");
    auto created = AudioFileWriter::create(path, {SampleFormat::s16le, 48000, 2}, Container::wav);
    BOOST_REQUIRE(std::holds_alternative<AudioFileWriter>(created));
    auto& writer = std::get<AudioFileWriter>(created);
    std::vector<int16_t> frames(2 * 1000);
    for (size_t i = 0; i < frames.size(); ++i) {
        frames[i] = static_cast<int16_t>(i + 1);
    }
    BOOST_REQUIRE_EQUAL(writer.append(frames.data(), frames.size() * 2), 0);
    BOOST_REQUIRE_EQUAL(writer.flush_header(), 0);
    // The file as a crash right now would leave it.
    std::filesystem::copy_file(path, dir.file("crashed.wav"));
    BOOST_REQUIRE_EQUAL(writer.append(frames.data(), frames.size() * 2), 0); // not flushed
    AudioFormat format;
    const auto out = as<int16_t>(read_file(dir.file("crashed.wav"), &format));
    BOOST_CHECK(out == frames);
    BOOST_CHECK_EQUAL(writer.finish(), 0);
    BOOST_CHECK_EQUAL(read_file(path, &format).size(), 2 * frames.size() * 2);
}

BOOST_AUTO_TEST_CASE(a_wav_refuses_data_past_its_32_bit_sizes_and_stays_valid) {
    ScratchDir dir;
    const std::string path = dir.file("full.wav");
    auto created = AudioFileWriter::create(path, {SampleFormat::s24le, 48000, 2}, Container::wav);
    BOOST_REQUIRE(std::holds_alternative<AudioFileWriter>(created));
    auto& writer = std::get<AudioFileWriter>(created);
    // 24-bit frames take 6 bytes in the file (8 in memory): room for 100.
    writer.lower_wav_limit_for_testing(600);
    const std::vector<uint8_t> frames(8 * 60, 0);
    BOOST_CHECK_EQUAL(writer.append(frames.data(), frames.size()), 0);
    BOOST_CHECK_EQUAL(writer.append(frames.data(), frames.size()), -EFBIG);
    BOOST_CHECK_EQUAL(writer.frames(), 60u);
    BOOST_CHECK_EQUAL(writer.finish(), 0);
    AudioFormat format;
    BOOST_CHECK_EQUAL(read_file(path, &format).size(), 60u * 2 * 4);
}

BOOST_AUTO_TEST_CASE(misuse_and_bad_files_are_refused_with_a_reason) {
    ScratchDir dir;
    auto created =
        AudioFileWriter::create(dir.file("w.wav"), {SampleFormat::s16le, 48000, 2}, Container::wav);
    auto& writer = std::get<AudioFileWriter>(created);
    const uint8_t three[3] = {};
    BOOST_CHECK_EQUAL(writer.append(three, 3), -EINVAL); // not whole frames
    BOOST_CHECK_EQUAL(writer.finish(), 0);
    BOOST_CHECK_EQUAL(writer.append(three, 4), -EBADF);
    BOOST_CHECK_EQUAL(writer.finish(), 0);

    const auto refused = [](const auto& result) { return !reason(result).empty(); };
    BOOST_CHECK(refused(AudioFileWriter::create(
        dir.file("x.wav"), {SampleFormat::invalid, 48000, 2}, Container::wav)));
    BOOST_CHECK(refused(AudioFileWriter::create(dir.file("x.flac"), {SampleFormat::s16le, 48000, 9},
                                                Container::flac)));
    BOOST_CHECK(refused(AudioFileWriter::create(dir.file("no/such/dir.wav"),
                                                {SampleFormat::s16le, 48000, 2}, Container::wav)));

    BOOST_CHECK(refused(AudioFileReader::open(dir.file("missing.wav"))));
    std::ofstream(dir.file("garbage.wav")) << "RIFF\x10\0\0\0WAVEfmt nonsense that is not audio";
    BOOST_CHECK(refused(AudioFileReader::open(dir.file("garbage.wav"))));
    std::ofstream(dir.file("empty.flac")) << "";
    BOOST_CHECK(refused(AudioFileReader::open(dir.file("empty.flac"))));
}

BOOST_AUTO_TEST_SUITE_END()

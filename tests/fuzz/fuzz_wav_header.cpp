// libFuzzer target for the WAV header parser (common/wav.h).
//
// Checks the promises parse_wav_header makes on any input, and that
// WavReader, which feeds the same scanner a read(2) at a time, takes the same
// decision on the same bytes. Any broken promise traps.
#include "common/wav.h"

#include <cstdint>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

namespace {

void check(bool promise) {
    if (!promise) {
        __builtin_trap();
    }
}

// Runs the bytes through WavReader via an in-memory file: it must accept
// exactly what the parser accepted, find the same format and data offset, and
// deliver whole frames from within the input.
void check_reader_agrees(const uint8_t* data, size_t size,
                         const std::variant<audiod::WavInfo, std::string>& parsed) {
    const audiod::UniqueFd fd(::memfd_create("fuzz_wav_header", MFD_CLOEXEC));
    if (!fd) {
        return; // no memfd: nothing to compare with
    }
    size_t done = 0;
    while (done < size) {
        const ssize_t n = ::write(fd.get(), data + done, size - done);
        if (n <= 0) {
            return;
        }
        done += static_cast<size_t>(n);
    }
    if (::lseek(fd.get(), 0, SEEK_SET) != 0) {
        return;
    }
    auto opened = audiod::WavReader::open(fd.get());
    auto* reader = std::get_if<audiod::WavReader>(&opened);
    const auto* info = std::get_if<audiod::WavInfo>(&parsed);
    check((reader != nullptr) == (info != nullptr));
    if (reader == nullptr) {
        return;
    }
    check(reader->info().data_offset == info->data_offset);
    check(reader->info().format.format == info->format.format);
    check(reader->info().format.channels == info->format.channels);
    check(reader->info().format.rate == info->format.rate);

    // Read it all: whole frames only, and never more than the input holds.
    const uint32_t frame = audiod::frame_bytes(info->format);
    uint8_t buffer[4096];
    uint64_t total = 0;
    for (;;) {
        const long got = reader->read_frames(buffer, sizeof buffer / frame);
        check(got >= 0);
        if (got == 0) {
            break;
        }
        total += static_cast<uint64_t>(got) * frame;
    }
    check(info->data_offset + total <= size);
    if (reader->info().data_bytes_known) {
        check(total <= reader->info().data_bytes);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto parsed = audiod::parse_wav_header({data, size});
    if (const auto* info = std::get_if<audiod::WavInfo>(&parsed)) {
        check(info->data_offset <= size);
        check(info->data_bytes <= size - info->data_offset);
        check(info->data_offset <= audiod::kWavMaxHeaderBytes + 8);
        check(audiod::frame_bytes(info->format) != 0);
        check(info->format.rate >= 1 && info->format.rate <= audiod::kWavMaxRate);
        check(info->format.channels >= 1 && info->format.channels <= audiod::kWavMaxChannels);
        check(info->data_bytes_known || info->data_offset + info->data_bytes == size);
    } else {
        check(!std::get<std::string>(parsed).empty());
    }
    check_reader_agrees(data, size, parsed);
    return 0;
}

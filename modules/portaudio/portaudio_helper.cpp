// portaudio-helper: one PortAudio device, playing or recording, in a
// process of its own, for a portaudio sink or source of the server
// (remote_device.h says when and why). It is started by the server, never
// by hand:
//
//   portaudio-helper playback|capture NAME RATE CHANNELS QUANTUM
//                    RING_FD WAKE_HELPER_FD WAKE_SERVER_FD REPLY_FD [KEY=VALUE...]
//
// It opens the device the options name exactly as the server would
// (pa_stream.h), writes the outcome to REPLY_FD and closes it, then waits
// for the server's start and moves frames between the shared ring
// (helper_ring.h) and the device, paced by the device, until the server
// says quit, the device fails, or the server is gone. A failure is written
// into the ring for the server and the process ends at once, without
// closing the stream: PortAudio 19.6 can wait for ever, or abort, closing a
// JACK stream whose server died (pa_stream.h), and ending the process is
// what lets PortAudio and libjack start afresh next time.
#include "device_options.h"
#include "helper_ring.h"
#include "pa_stream.h"
#include "recovery_escape.h"

#include <jack/jack.h>
#include <pa_jack.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

using namespace audiod;
using namespace audiod::portaudio;

namespace {

std::string g_name;

void quiet(const char*) {}

void log_to_stderr(int level, const char* component, const char* message) {
    static const char* const kLevels[] = {"error", "warning", "info", "debug"};
    const char* level_name = level >= 0 && level <= 3 ? kLevels[level] : "info";
    std::fprintf(stderr, "audiod: %s %s (helper of %s): %s\n", level_name, component,
                 g_name.c_str(), message);
}

struct Helper {
    PaDevice* device = nullptr;
    HelperRingHeader* header = nullptr;
    unsigned char* ring = nullptr;
    int wake_helper = -1; // readable when the server moved its position or its command
    int wake_server = -1;
    pid_t parent = 0;
};

// The failure for the server, then the end: nothing is closed (above).
[[noreturn]] void fail(Helper& helper, int code) {
    helper.header->failure.store(code != 0 ? code : -EIO, std::memory_order_release);
    wake_other_side(helper.wake_server);
    std::fflush(stderr);
    ::_exit(0);
}

// The server said quit: the stream is closed as the server would close an
// in-process one, and a PortAudio that blocks or aborts there ends only
// this process (the server kills it if it takes too long).
[[noreturn]] void quit(Helper& helper) {
    Pa_AbortStream(helper.device->stream);
    Pa_CloseStream(helper.device->stream);
    Pa_Terminate();
    std::fflush(stderr);
    ::_exit(0);
}

// Waits for the server to wake this side, for at most half a second;
// ends the process if the server asked it to or is gone.
void wait_for_server(Helper& helper) {
    pollfd fds{helper.wake_helper, POLLIN, 0};
    if (::poll(&fds, 1, 500) > 0) {
        uint64_t count = 0;
        [[maybe_unused]] const ssize_t n = ::read(helper.wake_helper, &count, sizeof count);
    }
    if (helper.header->command.load(std::memory_order_acquire) == kHelperQuit) {
        quit(helper);
    }
    if (::getppid() != helper.parent) {
        ::_exit(0); // the server died: its streams went with it
    }
}

[[noreturn]] void play(Helper& helper) {
    PaDevice& device = *helper.device;
    const uint32_t capacity = helper.header->capacity;
    for (;;) {
        if (const int rc = wait_for_quantum(device); rc != 0) {
            fail(helper, rc);
        }
        const uint64_t at = helper.header->consumed.load(std::memory_order_relaxed);
        uint64_t queued = 0;
        while ((queued = helper.header->produced.load(std::memory_order_acquire) - at) == 0) {
            wait_for_server(helper); // the device plays silence meanwhile
        }
        const auto count = static_cast<uint32_t>(std::min<uint64_t>(queued, device.quantum));
        if (const int gone = check_present(device); gone != 0) {
            fail(helper, gone);
        }
        const uint32_t first = helper_ring_first_piece(capacity, at, count);
        PaError err =
            write_stream(device.stream, helper.ring + (at % capacity) * device.frame_bytes, first);
        if ((err == paNoError || err == paOutputUnderflowed) && first < count) {
            const PaError second = write_stream(device.stream, helper.ring, count - first);
            err = second == paNoError ? err : second;
        }
        if (err == paOutputUnderflowed) {
            helper.header->xruns.fetch_add(1, std::memory_order_relaxed);
        } else if (err != paNoError) {
            fail(helper, error_code(err));
        }
        helper.header->consumed.store(at + count, std::memory_order_release);
        wake_other_side(helper.wake_server);
        if (helper.header->command.load(std::memory_order_acquire) == kHelperQuit) {
            quit(helper);
        }
    }
}

[[noreturn]] void record(Helper& helper) {
    PaDevice& device = *helper.device;
    const uint32_t capacity = helper.header->capacity;
    std::vector<unsigned char> dropped(size_t{device.quantum} * device.frame_bytes);
    for (;;) {
        if (const int rc = wait_for_quantum(device); rc != 0) {
            fail(helper, rc);
        }
        if (const int gone = check_present(device); gone != 0) {
            fail(helper, gone);
        }
        const uint64_t at = helper.header->produced.load(std::memory_order_relaxed);
        const uint64_t queued = at - helper.header->consumed.load(std::memory_order_acquire);
        PaError err = paNoError;
        bool kept = true;
        if (queued + device.quantum > capacity) {
            if (::getppid() != helper.parent) {
                ::_exit(0); // no one reads the ring: the server died
            }
            // The server's source is behind by the whole ring: this quantum
            // is read and dropped, as a device drops what is not read.
            err = read_stream(device.stream, dropped.data(), device.quantum);
            kept = false;
            helper.header->xruns.fetch_add(1, std::memory_order_relaxed);
        } else {
            const uint32_t first = helper_ring_first_piece(capacity, at, device.quantum);
            err = read_stream(device.stream, helper.ring + (at % capacity) * device.frame_bytes,
                              first);
            if ((err == paNoError || err == paInputOverflowed) && first < device.quantum) {
                const PaError second =
                    read_stream(device.stream, helper.ring, device.quantum - first);
                err = second == paNoError ? err : second;
            }
        }
        if (err == paInputOverflowed) {
            helper.header->xruns.fetch_add(1, std::memory_order_relaxed);
        } else if (err != paNoError) {
            fail(helper, error_code(err));
        }
        if (kept) {
            helper.header->produced.store(at + device.quantum, std::memory_order_release);
            wake_other_side(helper.wake_server);
        }
        if (helper.header->command.load(std::memory_order_acquire) == kHelperQuit) {
            quit(helper);
        }
    }
}

void write_all(int fd, const std::string& text) {
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return;
        }
        done += static_cast<size_t>(n);
    }
}

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
                 "portaudio-helper: %s\n"
                 "It is started by audiod's portaudio module, not by hand:\n"
                 "  portaudio-helper playback|capture NAME RATE CHANNELS QUANTUM RING_FD "
                 "WAKE_HELPER_FD WAKE_SERVER_FD REPLY_FD [KEY=VALUE...]\n",
                 why);
    std::exit(2);
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 10) {
        usage("too few arguments");
    }
    const std::string direction = argv[1];
    if (direction != "playback" && direction != "capture") {
        usage("the direction is playback or capture");
    }
    const bool capture = direction == "capture";
    g_name = argv[2];
    uint64_t numbers[7] = {};
    const uint64_t limits[7] = {768000, 64, 65536, 65535, 65535, 65535, 65535};
    for (int i = 0; i < 7; ++i) {
        if (!parse_uint(argv[3 + i], limits[i], numbers[i])) {
            usage("a number is out of range");
        }
    }
    const int ring_fd = static_cast<int>(numbers[3]);
    const int reply_fd = static_cast<int>(numbers[6]);
    std::signal(SIGPIPE, SIG_IGN);

    Helper helper;
    helper.parent = ::getppid();
    helper.wake_helper = static_cast<int>(numbers[4]);
    helper.wake_server = static_cast<int>(numbers[5]);
    struct stat ring_stat {};
    if (::fstat(ring_fd, &ring_stat) != 0 ||
        static_cast<size_t>(ring_stat.st_size) < kHelperRingDataOffset) {
        usage("RING_FD is not the server's ring");
    }
    void* mapped = ::mmap(nullptr, static_cast<size_t>(ring_stat.st_size), PROT_READ | PROT_WRITE,
                          MAP_SHARED, ring_fd, 0);
    if (mapped == MAP_FAILED) {
        usage("cannot map RING_FD");
    }
    helper.header = static_cast<HelperRingHeader*>(mapped);
    helper.ring = static_cast<unsigned char*>(mapped) + kHelperRingDataOffset;
    if (helper.header->magic != kHelperRingMagic || helper.header->version != kHelperRingVersion ||
        helper.header->capacity == 0 ||
        helper_ring_bytes(helper.header->capacity, helper.header->frame_bytes) >
            static_cast<size_t>(ring_stat.st_size)) {
        usage("RING_FD is not the server's ring, or of another version");
    }

    // KEY=VALUE, split into strings that live as long as the process.
    std::vector<std::pair<std::string, std::string>> pairs;
    for (int i = 10; i < argc; ++i) {
        const char* eq = std::strchr(argv[i], '=');
        if (eq == nullptr) {
            usage("an option is not KEY=VALUE");
        }
        pairs.emplace_back(std::string(argv[i], static_cast<size_t>(eq - argv[i])),
                           std::string(eq + 1));
    }
    std::vector<audiod_option> options;
    for (const auto& [key, value] : pairs) {
        options.push_back({key.c_str(), value.c_str()});
    }
    // libjack's complaints (three lines for each open while no JACK server
    // runs, once a second while a sink waits for one) are not the user's
    // business: PortAudio's own error, or its missing device, says it.
    jack_set_error_function(quiet);
    jack_set_info_function(quiet);
    const audiod_device_config config{g_name.c_str(),
                                      static_cast<uint32_t>(numbers[0]),
                                      static_cast<uint32_t>(numbers[1]),
                                      static_cast<uint32_t>(numbers[2]),
                                      options.data(),
                                      options.size()};
    audiod_host host{};
    host.abi_version = AUDIOD_MODULE_ABI_VERSION;
    host.log = log_to_stderr;
    // In the JACK graph, the sink's or source's name ("audiod-studio"),
    // not PortAudio's one "PortAudio" for every process.
    const std::string client_name = "audiod-" + g_name;
    PaJack_SetClientName(client_name.c_str());
    audiod_open_info info{};
    std::string why;
    int code = 0;
    helper.device = open_device(&host, config, capture, &info, &why, &code, true);
    if (helper.device != nullptr && helper.device->frame_bytes > helper.header->frame_bytes) {
        why = "the device's frames do not fit the server's ring";
        code = -EINVAL;
        helper.device = nullptr; // the process ends: nothing to close
    }
    if (helper.device == nullptr) {
        write_all(reply_fd, "error\n" + std::to_string(code != 0 ? code : -EIO) + "\n" + why);
        ::close(reply_fd);
        std::fflush(stderr);
        ::_exit(0);
    }
    char description[512];
    const size_t described = describe_device(*helper.device, description, sizeof description);
    std::string details(description, described);
    // The client's name as JACK gave it: "audiod-studio-01" while the
    // last helper's client is still in the graph (JACK has not yet seen
    // that it ended).
    const char* jack_client = nullptr;
    if (helper.device->api == "jack" && PaJack_GetClientName(&jack_client) == paNoError &&
        jack_client != nullptr) {
        details += "jack-client=" + std::string(jack_client) + "\n";
    }
    write_all(reply_fd, "ok\n" + std::to_string(info.format) + "\n" +
                            std::to_string(info.latency_frames) + "\n" +
                            std::to_string(helper.device->frame_bytes) + "\n" + details);
    ::close(reply_fd);

    // Opened: the server starts it at once, or has given up on it (a slow
    // open it stopped waiting for, whose sink was then unloaded).
    for (int waited = 0; helper.header->command.load(std::memory_order_acquire) != kHelperStart;
         ++waited) {
        if (waited == 60) {
            quit(helper); // 30 s: no one will start it
        }
        wait_for_server(helper);
    }
    if (const int rc = start_device(*helper.device); rc != 0) {
        fail(helper, rc);
    }
    if (capture) {
        record(helper);
    }
    play(helper);
}

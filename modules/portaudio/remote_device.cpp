#include "remote_device.h"

#include "device_options.h"
#include "helper_ring.h"
#include "monotonic_time.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

extern char** environ;

namespace audiod::portaudio {

struct RemoteDevice {
    const audiod_host* host = nullptr;
    std::string name;
    std::string arguments; // what the helper was started with, to match a pending one
    bool capture = false;
    uint32_t rate = 0;
    uint32_t quantum = 0;
    uint32_t frame_bytes = 0;
    pid_t pid = -1;
    int pidfd = -1;
    int wake_helper = -1;
    int wake_server = -1;
    int reply = -1; // until the helper has answered
    std::string answer;
    void* mapped = MAP_FAILED;
    size_t mapped_bytes = 0;
    HelperRingHeader* header = nullptr;
    unsigned char* ring = nullptr;
    int format = 0;
    uint32_t latency_frames = 0;
    std::string description;

    ~RemoteDevice();
};

namespace {

constexpr auto kFirstOpenWait = std::chrono::seconds(10);
constexpr auto kReopenWait = std::chrono::seconds(1);
constexpr auto kQuitWait = std::chrono::milliseconds(500);
constexpr auto kKillWait = std::chrono::seconds(1);

// Helpers still opening when their open stopped waiting, by "sink NAME" or
// "source NAME"; and the sinks and sources opened once (whose next open is
// a reopen).
std::mutex g_mutex;
std::map<std::string, std::unique_ptr<RemoteDevice>> g_pending;
std::set<std::string> g_opened_before;

// Debian 12's <sys/pidfd.h> declares these without C linkage, so C++
// cannot link them: the system calls themselves.
int pidfd_open(pid_t pid) {
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

int pidfd_kill(int pidfd) {
    return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0));
}

void close_fd(int& fd) {
    if (fd >= 0) {
        ::close(fd);
        fd = -1;
    }
}

// Where the helper is: beside this module, in the module directory.
std::string helper_path() {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&helper_path), &info) == 0 || info.dli_fname == nullptr) {
        return "portaudio-helper";
    }
    std::string path = info.dli_fname;
    const size_t slash = path.rfind('/');
    return (slash == std::string::npos ? std::string(".") : path.substr(0, slash)) +
           "/portaudio-helper";
}

// Waits for `fd` to be readable until `deadline_ns`; false if it is not.
bool wait_readable(int fd, int64_t deadline_ns) {
    for (;;) {
        const int64_t left = deadline_ns - monotonic_ns();
        if (left <= 0) {
            return false;
        }
        pollfd fds{fd, POLLIN, 0};
        const timespec t{static_cast<time_t>(left / 1'000'000'000),
                         static_cast<long>(left % 1'000'000'000)};
        const int n = ::ppoll(&fds, 1, &t, nullptr);
        if (n > 0) {
            return true;
        }
        if (n < 0 && errno != EINTR) {
            return false;
        }
    }
}

// Ends the helper: quit when asked, else killed; reaped here, or by a
// thread of its own if even SIGKILL takes longer than a second (a process
// in the kernel's uninterruptible sleep).
void end_helper(RemoteDevice& device) {
    if (device.pid <= 0) {
        return;
    }
    if (device.header != nullptr) {
        device.header->command.store(kHelperQuit, std::memory_order_release);
        wake_other_side(device.wake_helper);
    }
    const auto wait = [&](auto duration) {
        return wait_readable(
            device.pidfd,
            monotonic_ns() +
                std::chrono::duration_cast<std::chrono::nanoseconds>(duration).count());
    };
    if (!wait(kQuitWait)) {
        pidfd_kill(device.pidfd);
        wait(kKillWait);
    }
    siginfo_t info{};
    if (::waitid(P_PIDFD, static_cast<id_t>(device.pidfd), &info, WEXITED | WNOHANG) == 0 &&
        info.si_pid != 0) {
        close_fd(device.pidfd);
    } else {
        const int pidfd = device.pidfd;
        device.pidfd = -1;
        try {
            std::thread([pidfd] {
                siginfo_t ended{};
                ::waitid(P_PIDFD, static_cast<id_t>(pidfd), &ended, WEXITED);
                ::close(pidfd);
            }).detach();
        } catch (const std::system_error&) {
            ::close(pidfd); // no thread: a zombie is left rather than a wait
        }
    }
    device.pid = -1;
}

// Playback: two quanta, all of which the sound waits through. Capture:
// the quanta of half a second, which cost no latency (the source takes
// every whole quantum there as soon as it can, back to back) and let the
// source fall as far behind as a device's buffer would before the helper
// drops a quantum: one quantum (5 ms at 256 frames) was too little for an
// RT thread beside a loaded machine.
uint32_t ring_capacity(const RemoteDevice& device) {
    const uint32_t half_second =
        (device.rate / 2 + device.quantum - 1) / device.quantum * device.quantum;
    return device.capture ? std::max(2 * device.quantum, half_second) : 2 * device.quantum;
}

int set_up_ring(RemoteDevice& device, uint32_t channels) {
    const uint32_t capacity = ring_capacity(device);
    const uint32_t frame_bytes = 4 * channels;
    const int fd = ::memfd_create("audiod-portaudio-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) {
        return -errno;
    }
    device.mapped_bytes = helper_ring_bytes(capacity, frame_bytes);
    if (::ftruncate(fd, static_cast<off_t>(device.mapped_bytes)) != 0) {
        const int code = -errno;
        ::close(fd);
        return code;
    }
    ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
    device.mapped = ::mmap(nullptr, device.mapped_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (device.mapped == MAP_FAILED) {
        const int code = -errno;
        ::close(fd);
        return code;
    }
    device.header = new (device.mapped) HelperRingHeader{};
    device.header->magic = kHelperRingMagic;
    device.header->version = kHelperRingVersion;
    device.header->capacity = capacity;
    device.header->frame_bytes = frame_bytes;
    device.ring = static_cast<unsigned char*>(device.mapped) + kHelperRingDataOffset;
    return fd;
}

// Starts the helper with the ring, the two eventfds and the answer's pipe
// as its only descriptors besides standard input, output and error.
int spawn_helper(RemoteDevice& device, const audiod_device_config& config, std::string* error) {
    const int ring_fd = set_up_ring(device, config.channels);
    if (ring_fd < 0) {
        *error = std::string("cannot make the PortAudio helper's ring: ") + std::strerror(-ring_fd);
        return ring_fd;
    }
    device.wake_helper = ::eventfd(0, EFD_CLOEXEC);
    device.wake_server = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int answer[2] = {-1, -1};
    if (device.wake_helper < 0 || device.wake_server < 0 || ::pipe2(answer, O_CLOEXEC) != 0) {
        const int code = -errno;
        ::close(ring_fd);
        *error =
            std::string("cannot make the PortAudio helper's descriptors: ") + std::strerror(errno);
        return code;
    }
    device.reply = answer[0];

    std::vector<std::string> args = {helper_path(),
                                     device.capture ? "capture" : "playback",
                                     device.name,
                                     std::to_string(config.rate),
                                     std::to_string(config.channels),
                                     std::to_string(config.quantum),
                                     std::to_string(ring_fd),
                                     std::to_string(device.wake_helper),
                                     std::to_string(device.wake_server),
                                     std::to_string(answer[1])};
    for (size_t i = 0; i < config.option_count; ++i) {
        if (std::strcmp(config.options[i].key, "process") != 0) {
            args.push_back(std::string(config.options[i].key) + "=" + config.options[i].value);
        }
    }
    std::vector<char*> argv;
    for (std::string& arg : args) {
        argv.push_back(arg.data());
    }
    argv.push_back(nullptr);

    // The descriptors are passed at their own numbers: a dup2 onto itself
    // clears close-on-exec in the child only. The helper gets default
    // signal handling, nothing blocked, and a process group of its own, so
    // that a terminal's Ctrl-C reaches the server, which closes it.
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    for (const int fd : {ring_fd, device.wake_helper, device.wake_server, answer[1]}) {
        posix_spawn_file_actions_adddup2(&actions, fd, fd);
    }
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none;
    sigemptyset(&none);
    sigset_t defaults;
    sigemptyset(&defaults);
    for (const int signal : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGUSR1, SIGUSR2}) {
        sigaddset(&defaults, signal);
    }
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                              POSIX_SPAWN_SETPGROUP);
    const int spawned =
        ::posix_spawn(&device.pid, argv[0], &actions, &attributes, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    ::close(ring_fd);
    ::close(answer[1]);
    if (spawned != 0) {
        device.pid = -1;
        *error = "cannot start the PortAudio helper " + args[0] + ": " + std::strerror(spawned);
        return -spawned;
    }
    device.pidfd = pidfd_open(device.pid);
    if (device.pidfd < 0) {
        const int code = -errno;
        ::kill(device.pid, SIGKILL);
        ::waitpid(device.pid, nullptr, 0);
        device.pid = -1;
        *error = std::string("cannot watch the PortAudio helper: ") + std::strerror(-code);
        return code;
    }
    return 0;
}

// Reads the helper's answer until it closes the pipe or `deadline_ns`;
// true once it has closed it.
bool read_answer(RemoteDevice& device, int64_t deadline_ns) {
    while (device.reply >= 0) {
        if (!wait_readable(device.reply, deadline_ns)) {
            return false;
        }
        char buffer[512];
        const ssize_t n = ::read(device.reply, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            close_fd(device.reply);
        } else if (device.answer.size() < 8192) {
            device.answer.append(buffer, static_cast<size_t>(n));
        }
    }
    return true;
}

// What the helper answered: "ok\nFORMAT\nLATENCY\nFRAME_BYTES\nDESCRIPTION"
// or "error\nCODE\nMESSAGE". 0, or the error with its message.
int take_answer(RemoteDevice& device, std::string* error) {
    std::istringstream in(device.answer);
    std::string status;
    std::getline(in, status);
    if (status == "error") {
        std::string code_line;
        std::getline(in, code_line);
        std::getline(in, *error, '\0');
        int code = -EIO;
        try {
            code = std::stoi(code_line);
        } catch (const std::exception&) {
        }
        return code < 0 ? code : -EIO;
    }
    uint64_t format = 0;
    uint64_t latency = 0;
    uint64_t frame_bytes = 0;
    std::string line;
    const bool ok = status == "ok" && std::getline(in, line) && parse_uint(line, 64, format) &&
                    std::getline(in, line) && parse_uint(line, UINT32_MAX, latency) &&
                    std::getline(in, line) && parse_uint(line, 1024, frame_bytes) &&
                    frame_bytes > 0 && frame_bytes <= device.header->frame_bytes;
    if (!ok) {
        siginfo_t info{};
        const bool ended = ::waitid(P_PIDFD, static_cast<id_t>(device.pidfd), &info,
                                    WEXITED | WNOHANG | WNOWAIT) == 0 &&
                           info.si_pid != 0;
        *error = "the PortAudio helper ended without opening the device" +
                 (ended ? " (exit status " + std::to_string(info.si_status) +
                              "; its reason is in the log above)"
                        : std::string());
        return -EIO;
    }
    std::getline(in, device.description, '\0');
    device.format = static_cast<int>(format);
    device.latency_frames = static_cast<uint32_t>(latency);
    device.frame_bytes = static_cast<uint32_t>(frame_bytes);
    device.description += "helper-pid=" + std::to_string(device.pid) + "\n";
    return 0;
}

} // namespace

RemoteDevice::~RemoteDevice() {
    end_helper(*this);
    close_fd(pidfd);
    close_fd(reply);
    close_fd(wake_helper);
    close_fd(wake_server);
    if (mapped != MAP_FAILED) {
        ::munmap(mapped, mapped_bytes);
    }
}

RemoteDevice* open_remote(const audiod_host* host, const audiod_device_config& config, bool capture,
                          audiod_open_info* info, std::string* error, int* code) {
    const std::string key = std::string(capture ? "source " : "sink ") + config.name;
    std::unique_ptr<RemoteDevice> device;
    bool reopen = false;
    {
        std::lock_guard lock(g_mutex);
        reopen = g_opened_before.contains(key);
        if (const auto it = g_pending.find(key); it != g_pending.end()) {
            device = std::move(it->second);
            g_pending.erase(it);
        }
    }
    std::string arguments = std::to_string(config.rate) + '\n' + std::to_string(config.channels) +
                            '\n' + std::to_string(config.quantum) + '\n';
    for (size_t i = 0; i < config.option_count; ++i) {
        if (std::strcmp(config.options[i].key, "process") != 0) {
            arguments += std::string(config.options[i].key) + "=" + config.options[i].value + '\n';
        }
    }
    if (device && device->arguments != arguments) {
        device.reset(); // options changed since: that helper is of no use
    }
    if (!device) {
        device = std::make_unique<RemoteDevice>();
        device->host = host;
        device->name = config.name;
        device->capture = capture;
        device->rate = config.rate;
        device->quantum = config.quantum;
        device->arguments = arguments;
        if (const int spawned = spawn_helper(*device, config, error); spawned < 0) {
            *code = spawned;
            return nullptr;
        }
    }
    const auto wait = reopen ? kReopenWait : kFirstOpenWait;
    if (!read_answer(*device, monotonic_ns() + std::chrono::nanoseconds(wait).count())) {
        *error = "the PortAudio helper has not opened the device within " +
                 std::to_string(std::chrono::duration_cast<std::chrono::seconds>(wait).count()) +
                 " s; the next try takes its answer";
        *code = -EAGAIN;
        std::lock_guard lock(g_mutex);
        g_opened_before.insert(key);
        g_pending[key] = std::move(device);
        return nullptr;
    }
    if (const int answered = take_answer(*device, error); answered != 0) {
        *code = answered;
        return nullptr;
    }
    {
        std::lock_guard lock(g_mutex);
        g_opened_before.insert(key);
    }
    info->format = device->format;
    info->latency_frames = device->latency_frames + (capture ? 0 : device->header->capacity);
    return device.release();
}

void close_remote(RemoteDevice* device) {
    delete device;
}

int start_remote(RemoteDevice& device) {
    // The helper moves every quantum the device plays or records: it gets
    // this thread's scheduling (SCHED_FIFO at the server's priority, else
    // its nice value), once, here. At normal priority a loaded CI machine
    // starved it into device underruns, each losing the card's buffer (a
    // second of frames across an unplug test). Refused: it runs as it is.
    int policy = SCHED_OTHER;
    sched_param param{};
    if (pthread_getschedparam(pthread_self(), &policy, &param) == 0) {
        policy &= ~SCHED_RESET_ON_FORK; // the server's threads carry it
        if (policy == SCHED_FIFO || policy == SCHED_RR) {
            ::sched_setscheduler(device.pid, policy, &param);
        } else {
            errno = 0;
            const int nice = ::getpriority(PRIO_PROCESS, 0); // this thread's, on Linux
            if (errno == 0) {
                ::setpriority(PRIO_PROCESS, static_cast<id_t>(device.pid), nice);
            }
        }
    }
    device.header->command.store(kHelperStart, std::memory_order_release);
    wake_other_side(device.wake_helper);
    return 0;
}

int wait_remote(RemoteDevice& device) {
    HelperRingHeader& header = *device.header;
    const int64_t deadline =
        monotonic_ns() + int64_t{2} * device.quantum * 1'000'000'000 / device.rate + 600'000'000;
    for (;;) {
        if (const int failure = header.failure.load(std::memory_order_acquire); failure != 0) {
            return failure;
        }
        const uint64_t queued = header.produced.load(std::memory_order_acquire) -
                                header.consumed.load(std::memory_order_acquire);
        if (device.capture ? queued >= device.quantum
                           : queued + device.quantum <= header.capacity) {
            return 0;
        }
        const int64_t left = deadline - monotonic_ns();
        if (left <= 0) {
            return -ETIMEDOUT;
        }
        pollfd fds[2] = {{device.wake_server, POLLIN, 0}, {device.pidfd, POLLIN, 0}};
        const timespec t{static_cast<time_t>(left / 1'000'000'000),
                         static_cast<long>(left % 1'000'000'000)};
        if (::ppoll(fds, 2, &t, nullptr) > 0) {
            if ((fds[1].revents & POLLIN) != 0) {
                const int failure = header.failure.load(std::memory_order_acquire);
                return failure != 0 ? failure : -ENODEV; // the helper is gone
            }
            uint64_t count = 0;
            [[maybe_unused]] const ssize_t n = ::read(device.wake_server, &count, sizeof count);
        }
    }
}

int write_remote(RemoteDevice& device, const void* frames, uint32_t count) {
    HelperRingHeader& header = *device.header;
    const uint64_t at = header.produced.load(std::memory_order_relaxed);
    if (at - header.consumed.load(std::memory_order_acquire) + count > header.capacity) {
        return -ENOBUFS; // not after wait_remote: the server's own bug
    }
    copy_into_ring(device.ring, header.capacity, device.frame_bytes, at, frames, count);
    header.produced.store(at + count, std::memory_order_release);
    wake_other_side(device.wake_helper);
    return 0;
}

int read_remote(RemoteDevice& device, void* frames, uint32_t count) {
    HelperRingHeader& header = *device.header;
    const uint64_t at = header.consumed.load(std::memory_order_relaxed);
    if (header.produced.load(std::memory_order_acquire) - at < count) {
        std::memset(frames, 0, size_t{count} * device.frame_bytes);
        return -ENODATA; // not after wait_remote: the server's own bug
    }
    copy_out_of_ring(device.ring, header.capacity, device.frame_bytes, at, frames, count);
    header.consumed.store(at + count, std::memory_order_release);
    return 0;
}

uint64_t remote_xruns(const RemoteDevice& device) {
    return device.header->xruns.load(std::memory_order_relaxed);
}

size_t describe_remote(const RemoteDevice& device, char* text, size_t size) {
    const size_t n = size > 0 ? std::min(device.description.size(), size - 1) : 0;
    std::memcpy(text, device.description.data(), n);
    if (size > 0) {
        text[n] = '\0';
    }
    return n;
}

} // namespace audiod::portaudio

// A sink's or source's ops table (audiod_sink_ops, audiod_source_ops in
// audiod/module.h) made from a C++ class, so that no module writes the C
// functions that turn the server's calls into its methods: each module
// writes a class, and
//
//   constexpr audiod_module kModule = make_module<AlsaPcm, kOptions>("alsa", "...");
//
// makes its descriptor, which points at its tables (sink_table and
// source_table below). The class says what it does on each call:
//
//   // Opens one: nullptr with a message in *error and a negative errno in
//   // *code if it cannot. Thread: control.
//   static std::unique_ptr<T> open(const OpenRequest& request,
//                                  audiod_open_info* info,
//                                  std::string* error, int* code);
//   int start_rt() noexcept;                               // Thread: rt
//   int wait_rt() noexcept;                                // Thread: rt
//   int write_rt(const void* frames, uint32_t n) noexcept; // a sink's; Thread: rt
//   int read_rt(void* frames, uint32_t n) noexcept;        // a source's; Thread: rt
//   void stop_rt() noexcept;                               // Thread: rt
//   uint64_t xruns() const noexcept;         // optional; Thread: any
//   size_t describe(char*, size_t) const;    // optional; Thread: any but rt
//   int64_t media_time_rt() const noexcept;  // optional; Thread: rt
//   void playout(const audiod_playout&) noexcept;  // optional, a source's; Thread: control
//   int control(const std::string& request, std::string* error);  // optional, a sink's;
//                                                                  // Thread: control
//   ~T();  // close: frees everything, flushes a sink's audio; Thread: control
//
// A class with both write_rt and read_rt may be both a sink and a source;
// its `open` learns which from the request. The calls on the rt thread must
// be noexcept (the concepts below refuse a class whose are not) and must
// keep the real-time rule (audiod/module.h): these functions add nothing
// to them but a cast and a call, so they allocate, lock and block no more
// than the class does. No exception leaves `open` or `describe`: one is a
// failure to open, or nothing to describe.
#pragma once

#include "audiod/module.h"
#include "device_options.h"

#include <cerrno>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

namespace audiod {

// What the server asks of an open.
struct OpenRequest {
    const audiod_host* host;
    const audiod_device_config& config;
    bool capture; // a source's open; a sink's if false
};

// How a class opens one of its devices (see above).
template <class T>
using OpenFunction = std::unique_ptr<T>(const OpenRequest& request, audiod_open_info* info,
                                        std::string* error, int* code);

// What a sink and a source both do: open, start, wait, stop, and close by
// deleting. The calls on the rt thread return what the ABI's do and
// cannot throw.
template <class T>
concept ModuleDevice = std::is_nothrow_destructible_v<T> &&
    std::same_as<decltype(T::open), OpenFunction<T>> && requires(T& device) {
    requires std::same_as<decltype(device.start_rt()), int> && noexcept(device.start_rt());
    requires std::same_as<decltype(device.wait_rt()), int> && noexcept(device.wait_rt());
    requires noexcept(device.stop_rt());
};

template <class T>
concept ModuleSink = ModuleDevice<T> && requires(T& device, const void* frames, uint32_t count) {
    requires std::same_as<decltype(device.write_rt(frames, count)), int> &&
        noexcept(device.write_rt(frames, count));
};

template <class T>
concept ModuleSource = ModuleDevice<T> && requires(T& device, void* frames, uint32_t count) {
    requires std::same_as<decltype(device.read_rt(frames, count)), int> &&
        noexcept(device.read_rt(frames, count));
};

namespace module_ops {

template <class T>
T& self(void* instance) noexcept {
    return *static_cast<T*>(instance);
}

// Thread: control.
template <class T>
int open(bool capture, const audiod_host* host, const audiod_device_config* config, void** instance,
         audiod_open_info* info, char* error, size_t error_size) noexcept {
    std::string why;
    int code = -EINVAL;
    try {
        std::unique_ptr<T> device = T::open({host, *config, capture}, info, &why, &code);
        if (device == nullptr) {
            set_error(error, error_size, why);
            return code < 0 ? code : -EINVAL;
        }
        *instance = device.release();
        return 0;
    } catch (const std::bad_alloc&) {
        return -ENOMEM;
    } catch (const std::exception& e) {
        set_error(error, error_size, e.what());
        return -EIO;
    } catch (...) {
        return -EIO;
    }
}

template <class T>
struct Calls {
    // Thread: rt.
    static int start(void* instance) noexcept { return self<T>(instance).start_rt(); }
    static int wait(void* instance) noexcept { return self<T>(instance).wait_rt(); }
    static void stop(void* instance) noexcept { self<T>(instance).stop_rt(); }
    // Thread: control.
    static void close(void* instance) noexcept { delete static_cast<T*>(instance); }

    // Optional: NULL in the table when the class has none. Thread: any.
    static constexpr auto xruns() noexcept {
        if constexpr (requires(const T& device) {
                          requires std::same_as<decltype(device.xruns()), uint64_t>;
                          requires noexcept(device.xruns());
                      }) {
            return +[](void* instance) noexcept {
                return std::as_const(self<T>(instance)).xruns();
            };
        } else {
            return static_cast<uint64_t (*)(void*)>(nullptr);
        }
    }
    // Thread: rt.
    static constexpr auto media_time() noexcept {
        if constexpr (requires(const T& device) {
                          requires std::same_as<decltype(device.media_time_rt()), int64_t>;
                          requires noexcept(device.media_time_rt());
                      }) {
            return +[](void* instance) noexcept {
                return std::as_const(self<T>(instance)).media_time_rt();
            };
        } else {
            return static_cast<int64_t (*)(void*)>(nullptr);
        }
    }
    // (Off the rt thread, so it may build strings: what it throws describes
    // nothing.)
    static constexpr auto describe() noexcept {
        if constexpr (requires(const T& device, char* text, size_t size) {
                          requires std::same_as<decltype(device.describe(text, size)), size_t>;
                      }) {
            return +[](void* instance, char* text, size_t size) noexcept -> size_t {
                try {
                    return std::as_const(self<T>(instance)).describe(text, size);
                } catch (...) {
                    if (size > 0) {
                        text[0] = '\0';
                    }
                    return 0;
                }
            };
        } else {
            return static_cast<size_t (*)(void*, char*, size_t)>(nullptr);
        }
    }
};

template <ModuleSink T>
struct SinkCalls : Calls<T> {
    // Thread: control. What the class throws is a refusal.
    static constexpr auto control() noexcept {
        if constexpr (requires(T & device, const std::string& request, std::string* error) {
                          requires std::same_as<decltype(device.control(request, error)), int>;
                      }) {
            return +[](void* instance, const char* request, char* error,
                       size_t error_size) noexcept -> int {
                std::string message;
                int rc = 0;
                try {
                    rc = self<T>(instance).control(request, &message);
                } catch (...) {
                    rc = -ENOMEM;
                    message = "out of memory";
                }
                if (rc != 0 && error_size > 0) {
                    std::snprintf(error, error_size, "%s", message.c_str());
                }
                return rc;
            };
        } else {
            return static_cast<int (*)(void*, const char*, char*, size_t)>(nullptr);
        }
    }
    static int open(const audiod_host* host, const audiod_device_config* config, void** instance,
                    audiod_open_info* info, char* error, size_t error_size) noexcept {
        return module_ops::open<T>(false, host, config, instance, info, error, error_size);
    }
    static int write(void* instance, const void* frames, uint32_t count) noexcept {
        return self<T>(instance).write_rt(frames, count);
    }
};

template <ModuleSource T>
struct SourceCalls : Calls<T> {
    // Thread: control.
    static constexpr auto playout() noexcept {
        if constexpr (requires(T & device, const audiod_playout& p) {
                          requires noexcept(device.playout(p));
                      }) {
            return +[](void* instance, const audiod_playout* p) noexcept {
                self<T>(instance).playout(*p);
            };
        } else {
            return static_cast<void (*)(void*, const audiod_playout*)>(nullptr);
        }
    }
    static int open(const audiod_host* host, const audiod_device_config* config, void** instance,
                    audiod_open_info* info, char* error, size_t error_size) noexcept {
        return module_ops::open<T>(true, host, config, instance, info, error, error_size);
    }
    static int read(void* instance, void* frames, uint32_t count) noexcept {
        return self<T>(instance).read_rt(frames, count);
    }
};

} // namespace module_ops

// The sink table of T, which accepts the options `options` lists.
template <ModuleSink T>
constexpr audiod_sink_ops make_sink_ops(OptionSpecs options) noexcept {
    using C = module_ops::SinkCalls<T>;
    return {C::open,        C::start,       C::wait,         C::write,
            C::stop,        C::close,       C::xruns(),      C::describe(),
            options.data(), options.size(), C::media_time(), C::control()};
}

// The source table of T, which accepts the options `options` lists.
template <ModuleSource T>
constexpr audiod_source_ops make_source_ops(OptionSpecs options) noexcept {
    using C = module_ops::SourceCalls<T>;
    return {C::open,        C::start,       C::wait,         C::read,
            C::stop,        C::close,       C::xruns(),      C::describe(),
            options.data(), options.size(), C::media_time(), C::playout()};
}

// The tables themselves, made once each, for a descriptor to point at:
// &sink_table<AlsaPcm, kOptions>. (kNoOptions for a device that takes none.)
template <ModuleSink T, const auto& options>
inline constexpr audiod_sink_ops sink_table = make_sink_ops<T>(options);
template <ModuleSource T, const auto& options>
inline constexpr audiod_source_ops source_table = make_source_ops<T>(options);
inline constexpr OptionSpecs kNoOptions{};

// The descriptor of a module whose devices are T's: its sink, its source,
// or both, each taking `options`.
template <class T, const auto& options>
requires ModuleSink<T> || ModuleSource<T>
constexpr audiod_module make_module(const char* name, const char* description) noexcept {
    const audiod_sink_ops* sink = nullptr;
    const audiod_source_ops* source = nullptr;
    if constexpr (ModuleSink<T>) {
        sink = &sink_table<T, options>;
    }
    if constexpr (ModuleSource<T>) {
        source = &source_table<T, options>;
    }
    return {AUDIOD_MODULE_ABI_VERSION, name, description, sink, source};
}

} // namespace audiod

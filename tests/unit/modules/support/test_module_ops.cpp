// module_ops.h: the ops tables it makes from a class call the class's
// methods, leave out the optional calls a class lacks, close by deleting,
// and let no exception out of `open` or `describe`.
#include "audiod/audiod.h"
#include "module_ops.h"

#include <boost/test/unit_test.hpp>

#include <cstring>
#include <map>
#include <stdexcept>

using namespace audiod;

namespace {

constexpr audiod_option_spec kOpSpecs[] = {{"mode", "enum", "a", "a|b", "how"}};

// What the devices below were asked to do: "open", "start" ... and how
// often.
std::map<std::string, int> g_calls;

// Both a sink and a source, counting everything, and with the optional
// calls.
class Both {
public:
    // How the next open goes: "" opens; "refuse", "refuse-0", "bad_alloc",
    // "throw" do not.
    static inline std::string next_open;

    static std::unique_ptr<Both> open(const OpenRequest& request, audiod_open_info* info,
                                      std::string* error, int* code) {
        ++g_calls[request.capture ? "open source" : "open sink"];
        if (next_open == "refuse") {
            return refuse(error, code, std::string(request.config.name) + " is not there", -ENODEV);
        }
        if (next_open == "refuse-0") {
            return nullptr;
        }
        if (next_open == "bad_alloc") {
            throw std::bad_alloc();
        }
        if (next_open == "throw") {
            throw std::runtime_error("it broke");
        }
        info->format = AUDIOD_FORMAT_F32LE;
        info->latency_frames = 7;
        return std::make_unique<Both>();
    }
    ~Both() { ++g_calls["close"]; }

    int start_rt() noexcept { return ++g_calls["start"], 0; }
    int wait_rt() noexcept { return ++g_calls["wait"], -EPIPE; }
    int write_rt(const void* frames, uint32_t count) noexcept {
        ++g_calls["write"];
        return *static_cast<const int*>(frames) + static_cast<int>(count);
    }
    int read_rt(void* frames, uint32_t count) noexcept {
        ++g_calls["read"];
        *static_cast<int*>(frames) = static_cast<int>(count);
        return 0;
    }
    void stop_rt() noexcept { ++g_calls["stop"]; }
    [[nodiscard]] uint64_t xruns() const noexcept { return 42; }
    size_t describe(char* text, size_t size) const {
        if (throw_in_describe) {
            throw std::bad_alloc();
        }
        return static_cast<size_t>(std::snprintf(text, size, "x=1\n"));
    }

    // A request of its own: "ok", or refused with a message; one that
    // throws is refused too.
    int control(const std::string& request, std::string* error) {
        if (request == "throw") {
            throw std::bad_alloc();
        }
        if (request != "ok") {
            *error = "no '" + request + "'";
            return -EINVAL;
        }
        return 0;
    }

    bool throw_in_describe = false;
};

// A sink with nothing optional; with kXruns, an xruns that may throw,
// which is not taken for one; with kWait, a wait that may throw, which
// makes no sink at all.
enum Flaw { kNone, kXruns, kWait };
template <Flaw flaw>
class Plain {
public:
    static std::unique_ptr<Plain> open(const OpenRequest&, audiod_open_info*, std::string*, int*) {
        return std::make_unique<Plain>();
    }
    int start_rt() noexcept { return 0; }
    int wait_rt() noexcept(flaw != kWait) { return 0; }
    int write_rt(const void*, uint32_t) noexcept { return 0; }
    void stop_rt() noexcept {}
    [[nodiscard]] uint64_t xruns() const requires(flaw == kXruns) { return 1; }
};

static_assert(ModuleSink<Both> && ModuleSource<Both>);
static_assert(ModuleSink<Plain<kNone>> && !ModuleSource<Plain<kNone>>);
static_assert(!ModuleSink<Plain<kWait>>);

constexpr audiod_sink_ops kBothSink = make_sink_ops<Both>(kOpSpecs);
constexpr audiod_source_ops kBothSource = make_source_ops<Both>(kOpSpecs);
constexpr audiod_sink_ops kPlain = make_sink_ops<Plain<kNone>>({});
constexpr audiod_sink_ops kThrowingXruns = make_sink_ops<Plain<kXruns>>({});

const audiod_device_config kConfig{"dev", 48000, 2, 256, nullptr, 0};

// Opens through the table: the result, and the message.
int open_with(const std::string& how, void** instance, std::string* message) {
    Both::next_open = how;
    audiod_open_info info{};
    char error[128] = "untouched";
    const int rc = kBothSink.open(nullptr, &kConfig, instance, &info, error, sizeof error);
    *message = error;
    return rc;
}

} // namespace

BOOST_AUTO_TEST_SUITE(module_ops)

BOOST_AUTO_TEST_CASE(a_table_calls_the_class_and_closes_by_deleting) {
    g_calls = {};
    Both::next_open = "";
    void* instance = nullptr;
    audiod_open_info info{};
    char error[64] = {};
    BOOST_REQUIRE_EQUAL(kBothSink.open(nullptr, &kConfig, &instance, &info, error, sizeof error),
                        0);
    BOOST_REQUIRE(instance != nullptr);
    BOOST_CHECK_EQUAL(info.format, AUDIOD_FORMAT_F32LE);
    BOOST_CHECK_EQUAL(info.latency_frames, 7u);
    BOOST_CHECK_EQUAL(kBothSink.start(instance), 0);
    BOOST_CHECK_EQUAL(kBothSink.wait(instance), -EPIPE);
    const int frames = 3;
    BOOST_CHECK_EQUAL(kBothSink.write(instance, &frames, 4), 7);
    kBothSink.stop(instance);
    BOOST_CHECK_EQUAL(kBothSink.xruns(instance), 42u);
    char text[16] = {};
    BOOST_CHECK_EQUAL(kBothSink.describe(instance, text, sizeof text), 4u);
    BOOST_CHECK_EQUAL(std::string(text), "x=1\n");
    kBothSink.close(instance);
    const std::map<std::string, int> once = {{"open sink", 1}, {"start", 1}, {"wait", 1},
                                             {"write", 1},     {"stop", 1},  {"close", 1}};
    BOOST_CHECK(g_calls == once);

    BOOST_REQUIRE_EQUAL(kBothSource.open(nullptr, &kConfig, &instance, &info, error, sizeof error),
                        0);
    int got = 0;
    BOOST_CHECK_EQUAL(kBothSource.read(instance, &got, 9), 0);
    BOOST_CHECK_EQUAL(got, 9);
    kBothSource.close(instance);
    BOOST_CHECK_EQUAL(g_calls["open source"], 1);
    BOOST_CHECK_EQUAL(g_calls["read"], 1);
    BOOST_CHECK_EQUAL(g_calls["close"], 2);
}

BOOST_AUTO_TEST_CASE(a_table_carries_its_options) {
    BOOST_CHECK(kBothSink.option_specs == kOpSpecs);
    BOOST_CHECK_EQUAL(kBothSink.option_spec_count, 1u);
    BOOST_CHECK(kBothSource.option_specs == kOpSpecs);
    BOOST_CHECK(kPlain.option_specs == nullptr);
    BOOST_CHECK_EQUAL(kPlain.option_spec_count, 0u);
}

BOOST_AUTO_TEST_CASE(a_sinks_requests_of_its_own_are_answered_or_refused_with_why) {
    void* instance = nullptr;
    std::string message;
    BOOST_REQUIRE_EQUAL(open_with("", &instance, &message), 0);
    BOOST_REQUIRE(kBothSink.control != nullptr);
    char error[32] = {};
    BOOST_CHECK_EQUAL(kBothSink.control(instance, "ok", error, sizeof error), 0);
    BOOST_CHECK_EQUAL(kBothSink.control(instance, "nonsense", error, sizeof error), -EINVAL);
    BOOST_CHECK_EQUAL(std::string(error), "no 'nonsense'");
    BOOST_CHECK_EQUAL(kBothSink.control(instance, "throw", error, sizeof error), -ENOMEM);
    kBothSink.close(instance);
}

BOOST_AUTO_TEST_CASE(what_a_class_lacks_is_null) {
    BOOST_CHECK(kPlain.xruns == nullptr);
    BOOST_CHECK(kPlain.describe == nullptr);
    BOOST_CHECK(kPlain.control == nullptr);
    // An xruns that may throw is not taken for one.
    BOOST_CHECK(kThrowingXruns.xruns == nullptr);
    BOOST_CHECK(kPlain.open != nullptr && kPlain.start != nullptr && kPlain.wait != nullptr &&
                kPlain.write != nullptr && kPlain.stop != nullptr && kPlain.close != nullptr);
}

BOOST_AUTO_TEST_CASE(a_refusal_passes_its_error_and_message_on) {
    void* instance = nullptr;
    std::string message;
    BOOST_CHECK_EQUAL(open_with("refuse", &instance, &message), -ENODEV);
    BOOST_CHECK_EQUAL(message, "dev is not there");
    // A refusal that forgot its error is still an error.
    BOOST_CHECK_EQUAL(open_with("refuse-0", &instance, &message), -EINVAL);
    BOOST_CHECK(instance == nullptr);
}

BOOST_AUTO_TEST_CASE(no_exception_leaves_open_or_describe) {
    void* instance = nullptr;
    std::string message;
    BOOST_CHECK_EQUAL(open_with("bad_alloc", &instance, &message), -ENOMEM);
    BOOST_CHECK_EQUAL(open_with("throw", &instance, &message), -EIO);
    BOOST_CHECK_EQUAL(message, "it broke");
    BOOST_CHECK(instance == nullptr);

    BOOST_REQUIRE_EQUAL(open_with("", &instance, &message), 0);
    static_cast<Both*>(instance)->throw_in_describe = true;
    char text[16] = "stale";
    BOOST_CHECK_EQUAL(kBothSink.describe(instance, text, sizeof text), 0u);
    BOOST_CHECK_EQUAL(std::string(text), "");
    kBothSink.close(instance);
}

BOOST_AUTO_TEST_SUITE_END()

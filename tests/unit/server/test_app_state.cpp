// The per-application state file: round trips, hostile names, truncation,
// atomic saves and corrupt files set aside.
#include "control/control_server.h"
#include "engine/app_state.h"

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace audiod;

namespace {

struct TempDir {
    TempDir() {
        char path[] = "/tmp/audiod-state-XXXXXX";
        BOOST_REQUIRE(::mkdtemp(path));
        dir = path;
    }
    ~TempDir() { [[maybe_unused]] int rc = std::system(("rm -rf '" + dir + "'").c_str()); }
    std::string dir;
};

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace

BOOST_AUTO_TEST_SUITE(app_state)

BOOST_AUTO_TEST_CASE(round_trip_with_awkward_names) {
    AppStateStore store("");
    store.set("mpv", {0.5f, false, "headphones"});
    store.set("quote\"back\\slash", {0.25f, true, ""});
    store.set("caf\xc3\xa9 \xe2\x99\xab", {1.0f, true, "speakers.2"});
    store.set("unity", {}); // defaults are not stored
    store.set_default_sink("speakers.2");
    std::string error;
    const auto parsed = AppStateStore::parse(store.serialize(), &error);
    BOOST_REQUIRE_MESSAGE(parsed, error << "\n" << store.serialize());
    BOOST_CHECK_EQUAL(parsed->all().size(), 3u);
    BOOST_CHECK_EQUAL(parsed->get("mpv").volume, 0.5f);
    BOOST_CHECK_EQUAL(parsed->get("mpv").sink, "headphones");
    BOOST_CHECK(parsed->get("quote\"back\\slash").muted);
    BOOST_CHECK_EQUAL(parsed->get("quote\"back\\slash").volume, 0.25f);
    BOOST_CHECK(parsed->get("caf\xc3\xa9 \xe2\x99\xab").muted);
    BOOST_CHECK_EQUAL(parsed->default_sink(), "speakers.2");
    BOOST_CHECK(parsed->get("never-seen").is_default());
}

BOOST_AUTO_TEST_CASE(volumes_survive_exactly) {
    AppStateStore store("");
    const float awkward = 0.1f + 0.2f;
    store.set("x", {awkward, false, ""});
    std::string error;
    const auto parsed = AppStateStore::parse(store.serialize(), &error);
    BOOST_REQUIRE(parsed);
    BOOST_CHECK_EQUAL(parsed->get("x").volume, awkward);
}

BOOST_AUTO_TEST_CASE(every_truncation_is_refused_or_a_clean_prefix) {
    AppStateStore store("");
    for (int i = 0; i < 5; ++i) {
        store.set("app" + std::to_string(i), {0.1f * static_cast<float>(i + 1), i % 2 == 0, ""});
    }
    const std::string text = store.serialize();
    for (size_t n = 0; n < text.size(); ++n) {
        std::string error;
        const auto parsed = AppStateStore::parse(text.substr(0, n), &error);
        // A cut that parses must not lose an application silently.
        if (parsed) {
            BOOST_CHECK_EQUAL(parsed->all().size(), 5u);
        }
    }
}

BOOST_AUTO_TEST_CASE(save_is_atomic_and_load_sets_corruption_aside) {
    TempDir tmp;
    const std::string path = tmp.dir + "/sub/state";
    {
        AppStateStore store(path);
        BOOST_CHECK(store.load().ok()); // missing is fine
        store.set("a", {0.5f, false, ""});
        BOOST_CHECK(store.dirty());
        BOOST_CHECK(store.save_if_dirty().ok());
        BOOST_CHECK(!store.dirty());
        BOOST_CHECK(::access((path + ".tmp").c_str(), F_OK) != 0);
    }
    {
        AppStateStore store(path);
        BOOST_CHECK(store.load().ok());
        BOOST_CHECK_EQUAL(store.get("a").volume, 0.5f);
    }
    std::ofstream(path) << "version = 1\napps-count = 3\n";
    AppStateStore store(path);
    const std::string warning = store.load().reason();
    BOOST_CHECK(warning.find("truncated") != std::string::npos);
    BOOST_CHECK(warning.find(path + ".corrupt") != std::string::npos);
    BOOST_CHECK(store.all().empty());
    BOOST_CHECK_EQUAL(slurp(path + ".corrupt"), "version = 1\napps-count = 3\n");
    BOOST_CHECK(::access(path.c_str(), F_OK) != 0);
}

BOOST_AUTO_TEST_CASE(names_from_clients_are_made_safe) {
    BOOST_CHECK_EQUAL(sanitize_name("mpv"), "mpv");
    BOOST_CHECK_EQUAL(sanitize_name("a\nb\x7f"), "a?b?");
    BOOST_CHECK_EQUAL(sanitize_name("caf\xc3\xa9"), "caf\xc3\xa9");
    BOOST_CHECK_EQUAL(sanitize_name("bad\xc3"), "bad?");       // cut sequence
    BOOST_CHECK_EQUAL(sanitize_name("\xed\xa0\x80x"), "???x"); // a surrogate
    BOOST_CHECK_EQUAL(sanitize_name("\xc0\xaf"), "??");        // overlong
    BOOST_CHECK_EQUAL(sanitize_name(std::string(100, 'n')).size(), 64u);
    // A multi-byte character is never cut at the 64-byte limit.
    const std::string notes = std::string(63, 'n') + "\xe2\x99\xab";
    BOOST_CHECK_EQUAL(sanitize_name(notes), std::string(63, 'n'));
}

BOOST_AUTO_TEST_SUITE_END()

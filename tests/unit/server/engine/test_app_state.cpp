// The per-application state file: round trips, hostile names, truncation,
// atomic saves and corrupt files set aside.
#include "control/client_name.h"
#include "engine/app_state.h"
#include "unit/scratch_dir.h"

#include <boost/test/unit_test.hpp>

using namespace audiod;
using audiod::test::read_text;
using audiod::test::ScratchDir;

BOOST_AUTO_TEST_SUITE(app_state)

BOOST_AUTO_TEST_CASE(round_trip_with_awkward_names) {
    AppStateStore store("");
    BOOST_CHECK(store.set("mpv", {0.5f, false, "headphones"}).ok());
    BOOST_CHECK(store.set("quote\"back\\slash", {0.25f, true, ""}).ok());
    BOOST_CHECK(store.set("caf\xc3\xa9 \xe2\x99\xab", {1.0f, true, "speakers.2"}).ok());
    BOOST_CHECK(store.set("unity", {}).ok()); // chosen at run time, so kept
    store.set_default_sink("speakers.2");
    store.set_default_source("mic");
    std::string error;
    const auto parsed = AppStateStore::parse(store.serialize(), &error);
    BOOST_REQUIRE_MESSAGE(parsed, error << "\n" << store.serialize());
    BOOST_CHECK_EQUAL(parsed->names().size(), 4u);
    BOOST_CHECK(parsed->remembered("unity"));
    BOOST_CHECK_EQUAL(parsed->get("mpv").volume, 0.5f);
    BOOST_CHECK_EQUAL(parsed->get("mpv").sink, "headphones");
    BOOST_CHECK(parsed->get("quote\"back\\slash").muted);
    BOOST_CHECK_EQUAL(parsed->get("quote\"back\\slash").volume, 0.25f);
    BOOST_CHECK(parsed->get("caf\xc3\xa9 \xe2\x99\xab").muted);
    BOOST_CHECK_EQUAL(parsed->default_sink(), "speakers.2");
    BOOST_CHECK_EQUAL(parsed->default_source(), "mic");
    BOOST_CHECK(parsed->get("never-seen").is_default());
}

BOOST_AUTO_TEST_CASE(volumes_survive_exactly) {
    AppStateStore store("");
    const float awkward = 0.1f + 0.2f;
    BOOST_CHECK(store.set("x", {awkward, false, ""}).ok());
    std::string error;
    const auto parsed = AppStateStore::parse(store.serialize(), &error);
    BOOST_REQUIRE(parsed);
    BOOST_CHECK_EQUAL(parsed->get("x").volume, awkward);
}

BOOST_AUTO_TEST_CASE(every_truncation_is_refused_or_a_clean_prefix) {
    AppStateStore store("");
    for (int i = 0; i < 5; ++i) {
        BOOST_CHECK(
            store.set("app" + std::to_string(i), {0.1f * static_cast<float>(i + 1), i % 2 == 0, ""})
                .ok());
    }
    const std::string text = store.serialize();
    for (size_t n = 0; n < text.size(); ++n) {
        std::string error;
        const auto parsed = AppStateStore::parse(text.substr(0, n), &error);
        // A cut that parses must not lose an application silently.
        if (parsed) {
            BOOST_CHECK_EQUAL(parsed->names().size(), 5u);
        }
    }
}

BOOST_AUTO_TEST_CASE(save_is_atomic_and_load_sets_corruption_aside) {
    ScratchDir tmp;
    const std::string path = tmp.file("sub/state");
    {
        AppStateStore store(path);
        BOOST_CHECK(store.load().ok()); // missing is fine
        BOOST_CHECK(store.set("a", {0.5f, false, ""}).ok());
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
    BOOST_CHECK(store.names().empty());
    BOOST_CHECK_EQUAL(read_text(path + ".corrupt"), "version = 1\napps-count = 3\n");
    BOOST_CHECK(::access(path.c_str(), F_OK) != 0);
}

BOOST_AUTO_TEST_CASE(a_rule_applies_until_a_run_time_change_which_wins_until_forgotten) {
    AppStateStore store("");
    store.set_rules({{"mpv", {0.5f, false, "headphones"}}});
    BOOST_CHECK_EQUAL(store.get("mpv").volume, 0.5f);
    BOOST_CHECK_EQUAL(store.get("mpv").sink, "headphones");
    BOOST_CHECK(store.has_rule("mpv") && !store.remembered("mpv"));
    BOOST_CHECK(!store.dirty()); // a rule is configuration, not state

    // Back to 100 % at run time: that differs from the rule, so it is kept.
    BOOST_CHECK(store.set("mpv", {1.0f, false, "headphones"}).ok());
    BOOST_CHECK_EQUAL(store.get("mpv").volume, 1.0f);
    BOOST_CHECK(store.remembered("mpv"));
    std::string error;
    auto parsed = AppStateStore::parse(store.serialize(), &error);
    BOOST_REQUIRE_MESSAGE(parsed, error);
    parsed->set_rules({{"mpv", {0.5f, false, "headphones"}}});
    BOOST_CHECK_EQUAL(parsed->get("mpv").volume, 1.0f); // across a restart too

    BOOST_CHECK(parsed->forget("mpv"));
    BOOST_CHECK_EQUAL(parsed->get("mpv").volume, 0.5f);
    BOOST_CHECK(!parsed->forget("mpv"));
    BOOST_CHECK(!parsed->forget("never-heard-of"));
    // A rule's application is listed though it never played.
    BOOST_CHECK(parsed->names() == std::vector<std::string>{"mpv"});
}

BOOST_AUTO_TEST_CASE(applications_that_played_are_remembered_with_the_time) {
    ScratchDir tmp;
    AppStateStore store(tmp.file("state"));
    store.mark_seen("aplay", 1796000000);
    BOOST_CHECK(store.dirty()); // a new application is saved at once
    BOOST_CHECK(store.save_if_dirty().ok());
    store.mark_seen("aplay", 1796000500);
    BOOST_CHECK(!store.dirty()); // a newer time waits for the next save
    BOOST_CHECK(store.get("aplay").is_default() && !store.remembered("aplay"));
    BOOST_CHECK(store.set("mpv", {0.25f, true, ""}).ok());
    std::string error;
    const auto parsed = AppStateStore::parse(store.serialize(), &error);
    BOOST_REQUIRE_MESSAGE(parsed, error << "\n" << store.serialize());
    BOOST_CHECK_EQUAL(parsed->last_seen("aplay"), 1796000500);
    BOOST_CHECK(!parsed->remembered("aplay"));
    BOOST_CHECK_EQUAL(parsed->last_seen("mpv"), 0); // set before it ever played
    BOOST_CHECK(parsed->remembered("mpv"));
    BOOST_CHECK(parsed->names() == (std::vector<std::string>{"aplay", "mpv"}));

    // A negative time or an entry that says nothing is a damaged file.
    BOOST_CHECK(
        !AppStateStore::parse("version = 1\napps-count = 1\n[apps.a]\nlast-seen = -4\n", &error));
    BOOST_CHECK(!AppStateStore::parse("version = 1\napps-count = 1\n[apps.a]\n", &error));
}

BOOST_AUTO_TEST_CASE(the_number_of_remembered_applications_is_bounded) {
    AppStateStore store("");
    for (size_t i = 0; i < AppStateStore::kMaxApps; ++i) {
        store.mark_seen("seen" + std::to_string(i), 1000 + static_cast<int64_t>(i));
    }
    // Full: the one seen longest ago makes room.
    store.mark_seen("newcomer", 5000);
    BOOST_CHECK_EQUAL(store.names().size(), AppStateStore::kMaxApps);
    BOOST_CHECK_EQUAL(store.last_seen("seen0"), 0);
    BOOST_CHECK_EQUAL(store.last_seen("newcomer"), 5000);
    // Settings are never dropped to make room: when all hold settings, a
    // new one is refused with a way out.
    for (const std::string& name : store.names()) {
        BOOST_CHECK(store.set(name, {0.5f, false, ""}).ok());
    }
    const Status refused = store.set("one-too-many", {0.5f, false, ""});
    BOOST_CHECK(!refused.ok());
    BOOST_CHECK_MESSAGE(refused.reason().find("audioctl forget") != std::string::npos, refused);
    store.mark_seen("one-too-many", 6000);
    BOOST_CHECK_EQUAL(store.last_seen("one-too-many"), 0);
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

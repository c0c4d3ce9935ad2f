// The stream-restore extension's entries: audiod's per-application state
// as entries, and entries read as libpulse writes them
// (pulse/stream_restore.h).
#include "pulse/stream_restore.h"

#include <boost/test/unit_test.hpp>

using namespace audiod;
using namespace audiod::pulse;

BOOST_AUTO_TEST_SUITE(pulse_stream_restore)

BOOST_AUTO_TEST_CASE(application_entries_are_named_by_the_application) {
    BOOST_CHECK(app_of_entry("sink-input-by-application-name:Firefox") == "Firefox");
    BOOST_CHECK(!app_of_entry("sink-input-by-application-name:"));
    BOOST_CHECK(!app_of_entry("sink-input-by-media-role:event"));
    BOOST_CHECK(!app_of_entry("source-output-by-application-name:Firefox"));
    BOOST_CHECK_EQUAL(entry_of_app("mpv"), "sink-input-by-application-name:mpv");
}

BOOST_AUTO_TEST_CASE(an_application_is_an_entry_that_reads_back) {
    proto::AppInfo app;
    app.name = "mpv";
    app.volume = 0.125f; // 50 % on PulseAudio's cubic scale
    app.muted = true;
    app.sink = "hdmi";
    const RestoreEntry entry = restore_entry(app, 2);
    TagWriter w;
    put_restore_entry(w, entry);
    TagReader r(w.bytes());
    RestoreEntry read;
    BOOST_REQUIRE(get_restore_entry(r, read));
    BOOST_CHECK(r.done());
    BOOST_CHECK_EQUAL(read.name, "sink-input-by-application-name:mpv");
    BOOST_CHECK_EQUAL(read.map.positions.size(), 2u);
    BOOST_REQUIRE_EQUAL(read.volume.values.size(), 2u);
    BOOST_CHECK_EQUAL(read.volume.values[0], 0x8000u);
    BOOST_CHECK(read.device == "hdmi");
    BOOST_CHECK(read.muted);
    // No preferred sink: a null device.
    app.sink.clear();
    BOOST_CHECK(!restore_entry(app, 2).device);
}

BOOST_AUTO_TEST_CASE(entries_without_a_name_or_with_a_mismatched_volume_are_refused) {
    RestoreEntry bad;
    bad.name = "sink-input-by-application-name:x";
    bad.map.positions = {1, 2};
    bad.volume.values = {0x10000u};
    TagWriter w;
    put_restore_entry(w, bad);
    TagReader r(w.bytes());
    RestoreEntry read;
    BOOST_CHECK(!get_restore_entry(r, read));

    RestoreEntry nameless;
    TagWriter v;
    put_restore_entry(v, nameless);
    TagReader s(v.bytes());
    BOOST_CHECK(!get_restore_entry(s, read));

    // No volume at all (an empty map and volume) is an entry.
    RestoreEntry volumeless;
    volumeless.name = "sink-input-by-media-role:event";
    TagWriter u;
    put_restore_entry(u, volumeless);
    TagReader t(u.bytes());
    BOOST_CHECK(get_restore_entry(t, read));
    BOOST_CHECK(read.volume.values.empty());
}

BOOST_AUTO_TEST_SUITE_END()

// What a client may ask for and hold (engine/stream_table.h): formats,
// rates and channels in range, a share of streams and of shared memory per
// client, rings large enough for the largest cycle.
#include "engine/stream_table.h"
#include "unit/server/stepped_sink.h"

#include "audiod/audiod.h"

#include <boost/test/unit_test.hpp>

using namespace audiod;
using namespace audiod::test;

namespace {

StreamRequest request_for(uint32_t client, uint64_t buffer_frames = 4800) {
    StreamRequest request;
    request.client_id = client;
    request.app = "table";
    request.params.format = static_cast<uint32_t>(SampleFormat::s16le);
    request.params.rate = 48000;
    request.params.channels = 2;
    request.params.buffer_frames = buffer_frames;
    request.params.volume = 1.0f;
    return request;
}

struct TableRig {
    SinkRig device;
    StreamTable table;

    std::variant<std::unique_ptr<Stream>, ClientError> make(const StreamRequest& request,
                                                            uint32_t memory_mb = 64) {
        return table.make(request, Placement(device.sink.get()), 64, memory_mb);
    }
    // The error a request gets, or "" if it is admitted (and then added).
    std::string error_for(const StreamRequest& request, uint32_t memory_mb = 64) {
        auto made = make(request, memory_mb);
        if (auto* error = std::get_if<ClientError>(&made)) {
            return error->message;
        }
        table.add(std::move(std::get<std::unique_ptr<Stream>>(made)));
        return "";
    }
};

} // namespace

BOOST_AUTO_TEST_SUITE(stream_table)

BOOST_AUTO_TEST_CASE(what_a_client_asks_for_is_checked) {
    TableRig rig;
    StreamRequest r = request_for(1);
    r.params.format = 99;
    BOOST_CHECK_EQUAL(rig.error_for(r), "unknown sample format 99");
    r = request_for(1);
    r.params.format = static_cast<uint32_t>(SampleFormat::invalid);
    BOOST_CHECK_EQUAL(rig.error_for(r), "unknown sample format 0");
    r = request_for(1);
    r.params.rate = 7999;
    BOOST_CHECK_EQUAL(rig.error_for(r), "rate 7999 Hz is outside 8000..192000 Hz");
    r = request_for(1);
    r.params.channels = 9;
    BOOST_CHECK_EQUAL(rig.error_for(r), "9 channels: between 1 and 8 please");
    r = request_for(1);
    r.params.volume = 4.5f;
    BOOST_CHECK_EQUAL(rig.error_for(r), "volume must be between 0 and 4");
    BOOST_CHECK(rig.table.all().empty());
    BOOST_CHECK_EQUAL(rig.error_for(request_for(1)), "");
    BOOST_CHECK_EQUAL(rig.table.all().size(), 1u);
}

BOOST_AUTO_TEST_CASE(a_client_holds_at_most_its_share_of_streams) {
    TableRig rig;
    for (size_t i = 0; i < StreamTable::kMaxStreamsPerClient; ++i) {
        BOOST_REQUIRE_EQUAL(rig.error_for(request_for(1, 256)), "");
    }
    BOOST_CHECK_EQUAL(rig.error_for(request_for(1, 256)), "too many streams for one client");
    BOOST_CHECK_EQUAL(rig.error_for(request_for(2, 256)), ""); // another client's share
    BOOST_CHECK_EQUAL(rig.table.count_on(*rig.device.sink), StreamTable::kMaxStreamsPerClient + 1);
}

BOOST_AUTO_TEST_CASE(a_client_holds_at_most_its_share_of_shared_memory) {
    TableRig rig;
    // 10 s of stereo s16 at 48 kHz is 1.8 MiB: two fit in 4 MiB, a third not.
    BOOST_CHECK_EQUAL(rig.error_for(request_for(1, 480000), 4), "");
    BOOST_CHECK_EQUAL(rig.error_for(request_for(1, 480000), 4), "");
    const std::string refused = rig.error_for(request_for(1, 480000), 4);
    BOOST_CHECK_MESSAGE(refused.find("past its shared-memory limit") != std::string::npos, refused);
    BOOST_CHECK_MESSAGE(refused.find("4 MB; [server] client-memory-mb") != std::string::npos,
                        refused);
    // The server's own streams (a relay's, client 0) are not counted.
    BOOST_CHECK_EQUAL(rig.error_for(request_for(0, 480000), 4), "");
    BOOST_CHECK_EQUAL(rig.error_for(request_for(0, 480000), 4), "");
    BOOST_CHECK_EQUAL(rig.error_for(request_for(0, 480000), 4), "");
}

BOOST_AUTO_TEST_CASE(a_ring_holds_two_of_the_largest_cycle_and_ids_are_not_reused) {
    TableRig rig;
    auto small = rig.table.make(request_for(1, 16), Placement(rig.device.sink.get()), 1000, 64);
    BOOST_REQUIRE(std::holds_alternative<std::unique_ptr<Stream>>(small));
    const Stream& stream = *std::get<std::unique_ptr<Stream>>(small);
    BOOST_CHECK_GE(stream.ring.capacity(), 2u * 1000);
    BOOST_CHECK_EQUAL(stream.id, 1u);
    BOOST_CHECK(stream.device() == rig.device.sink.get());
    BOOST_CHECK_EQUAL(rig.error_for(request_for(1)), "");
    BOOST_CHECK(rig.table.find(2) != nullptr);
    rig.table.erase(2);
    BOOST_CHECK(rig.table.find(2) == nullptr);
    BOOST_CHECK_EQUAL(rig.error_for(request_for(1)), "");
    BOOST_CHECK(rig.table.find(3) != nullptr);
}

BOOST_AUTO_TEST_SUITE_END()

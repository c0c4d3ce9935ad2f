// What a real libpulse program sent (recorded against PulseAudio 16, the
// fuzzer's seed corpus: tests/fuzz/corpus/pulse/NAME), without the
// fuzzer's first byte (where it cuts the input in two).
#pragma once

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace audiod::test {

inline std::vector<uint8_t> recorded_session(const std::string& name) {
    std::ifstream in(std::string(AUDIOD_SOURCE_DIR) + "/tests/fuzz/corpus/pulse/" + name,
                     std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    BOOST_REQUIRE_GT(bytes.size(), 1u);
    bytes.erase(bytes.begin());
    return bytes;
}

} // namespace audiod::test

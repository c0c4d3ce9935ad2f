// Reads audiod.conf(5) as the tests that hold it to the code's key tables
// see it: every key documented as `.TP` then `.B key`, by the `.SH` section
// and `.SS` subsection it is in, with the text that follows it up to `.br`
// (its type, default and range).
#pragma once

#include <map>
#include <string>
#include <utility>

namespace audiod::test {

struct ManualKey {
    std::string summary; // "integer; default 48000; 8000 to 192000."
};

// (section or subsection, key) -> what the page says of it. A key under a
// `.SS` is filed under the subsection ("file sink"), else under the `.SH`
// ("[server]"). Fonts are dropped and `\-` read as '-'.
using ManualKeys = std::map<std::pair<std::string, std::string>, ManualKey>;

[[nodiscard]] ManualKeys read_manual_keys(const std::string& path);

} // namespace audiod::test

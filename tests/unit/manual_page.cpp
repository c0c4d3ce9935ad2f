#include "unit/manual_page.h"

#include <fstream>
#include <stdexcept>

namespace audiod::test {

namespace {

// Roff as text: fonts dropped, escapes read, quotes around a heading gone.
std::string plain(std::string line) {
    std::string out;
    for (size_t i = 0; i < line.size(); ++i) {
        if (line[i] == '\\' && i + 1 < line.size()) {
            const char next = line[i + 1];
            if (next == 'f' && i + 2 < line.size()) {
                i += 2; // \fB, \fI, \fR
                continue;
            }
            if (next == '-' || next == '\\' || next == '.') {
                out += next;
                ++i;
                continue;
            }
        }
        out += line[i];
    }
    if (out.size() >= 2 && out.front() == '"' && out.back() == '"') {
        out = out.substr(1, out.size() - 2);
    }
    return out;
}

} // namespace

ManualKeys read_manual_keys(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        throw std::runtime_error("cannot read " + path);
    }
    ManualKeys keys;
    std::string section;
    std::string subsection;
    std::string line;
    bool after_tp = false;
    ManualKey* open_key = nullptr;
    while (std::getline(in, line)) {
        if (line.rfind(".SH ", 0) == 0) {
            section = plain(line.substr(4));
            subsection.clear();
            open_key = nullptr;
        } else if (line.rfind(".SS ", 0) == 0) {
            subsection = plain(line.substr(4));
            open_key = nullptr;
        } else if (line == ".TP") {
            after_tp = true;
            open_key = nullptr;
            continue;
        } else if (after_tp && line.rfind(".B ", 0) == 0) {
            const std::string where = subsection.empty() ? section : subsection;
            open_key = &keys[{where, plain(line.substr(3))}];
        } else if (line == ".br" || line.rfind(".", 0) == 0) {
            open_key = nullptr;
        } else if (open_key != nullptr) {
            open_key->summary += (open_key->summary.empty() ? "" : " ") + plain(line);
        }
        after_tp = false;
    }
    return keys;
}

} // namespace audiod::test

// Runs a fuzz target without libFuzzer: every file of its seed corpus, then
// a fixed number of deterministic mutations of each (bit flips, truncations,
// byte insertions). This makes each fuzz target an ordinary regression test
// in every build, including the sanitizer builds; real fuzzing is done with
// clang and -DAUDIOD_BUILD_FUZZERS=ON.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s CORPUS_DIR [MUTATIONS_PER_FILE]\n", argv[0]);
        return 2;
    }
    const int mutations = argc > 2 ? std::atoi(argv[2]) : 2000;
    std::vector<std::vector<uint8_t>> corpus;
    for (const auto& entry : std::filesystem::directory_iterator(argv[1])) {
        std::ifstream in(entry.path(), std::ios::binary);
        corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    if (corpus.empty()) {
        std::fprintf(stderr, "empty corpus %s\n", argv[1]);
        return 1;
    }
    std::mt19937 rng(12345);
    size_t runs = 0;
    for (const auto& seed : corpus) {
        LLVMFuzzerTestOneInput(seed.data(), seed.size());
        ++runs;
        for (int m = 0; m < mutations; ++m) {
            std::vector<uint8_t> input = seed;
            const int edits = 1 + static_cast<int>(rng() % 4);
            for (int e = 0; e < edits; ++e) {
                switch (rng() % 4) {
                case 0:
                    if (!input.empty()) {
                        input[rng() % input.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
                    }
                    break;
                case 1:
                    if (!input.empty()) {
                        input.resize(rng() % input.size());
                    }
                    break;
                case 2:
                    input.insert(input.begin() + static_cast<long>(rng() % (input.size() + 1)),
                                 static_cast<uint8_t>(rng()));
                    break;
                default:
                    if (!input.empty()) {
                        input[rng() % input.size()] = static_cast<uint8_t>(rng());
                    }
                    break;
                }
            }
            LLVMFuzzerTestOneInput(input.data(), input.size());
            ++runs;
        }
    }
    std::printf("%zu inputs, no crash\n", runs);
    return 0;
}

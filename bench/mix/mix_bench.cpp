// Cost of the mixing kernels per quantum: what one stream adds to a cycle,
// and what the sink's output conversion costs. Run: audiod-bench-mix.
#include "dsp/mix_kernels.h"

#include <benchmark/benchmark.h>

#include <vector>

using namespace audiod;

namespace {

constexpr unsigned kChannels = 2;

void BM_accumulate_s16(benchmark::State& state) {
    const size_t samples = static_cast<size_t>(state.range(0)) * kChannels;
    std::vector<int16_t> in(samples, 1234);
    std::vector<float> bus(samples, 0.0f);
    for (auto _ : state) {
        mix::accumulate_s16(bus.data(), in.data(), samples, 0.7f);
        benchmark::DoNotOptimize(bus.data());
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_accumulate_f32(benchmark::State& state) {
    const size_t samples = static_cast<size_t>(state.range(0)) * kChannels;
    std::vector<float> in(samples, 0.25f);
    std::vector<float> bus(samples, 0.0f);
    for (auto _ : state) {
        mix::accumulate_f32(bus.data(), in.data(), samples, 0.7f);
        benchmark::DoNotOptimize(bus.data());
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_accumulate_s16_ramp(benchmark::State& state) {
    const size_t frames = static_cast<size_t>(state.range(0));
    std::vector<int16_t> in(frames * kChannels, 1234);
    std::vector<float> bus(frames * kChannels, 0.0f);
    for (auto _ : state) {
        mix::accumulate_s16_ramp(bus.data(), in.data(), frames, kChannels, 1.0f, -0.001f);
        benchmark::DoNotOptimize(bus.data());
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_bus_to_s16(benchmark::State& state) {
    const size_t samples = static_cast<size_t>(state.range(0)) * kChannels;
    std::vector<float> bus(samples, 0.3f);
    std::vector<int16_t> out(samples);
    for (auto _ : state) {
        mix::bus_to_s16(out.data(), bus.data(), samples);
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}

// A whole cycle's arithmetic for N s16 streams at one quantum.
void BM_cycle_n_streams(benchmark::State& state) {
    const size_t frames = 64;
    const auto streams = static_cast<size_t>(state.range(0));
    std::vector<std::vector<int16_t>> inputs(streams, std::vector<int16_t>(frames * kChannels, 99));
    std::vector<float> bus(frames * kChannels);
    std::vector<int16_t> out(frames * kChannels);
    for (auto _ : state) {
        std::fill(bus.begin(), bus.end(), 0.0f);
        for (const auto& in : inputs) {
            mix::accumulate_s16(bus.data(), in.data(), in.size(), 1.0f);
        }
        mix::bus_to_s16(out.data(), bus.data(), bus.size());
        benchmark::DoNotOptimize(out.data());
    }
}

} // namespace

BENCHMARK(BM_accumulate_s16)->Arg(64)->Arg(256)->Arg(1024);
BENCHMARK(BM_accumulate_f32)->Arg(64)->Arg(256)->Arg(1024);
BENCHMARK(BM_accumulate_s16_ramp)->Arg(64)->Arg(256);
BENCHMARK(BM_bus_to_s16)->Arg(64)->Arg(256)->Arg(1024);
BENCHMARK(BM_cycle_n_streams)->Arg(1)->Arg(8)->Arg(32)->Arg(64);

BENCHMARK_MAIN();

// response_encoder_bench: what ResponseEncoder::Encode costs the daemon's CPU per window, for each
// encoding the host makes (a window of 10 frames x 5000 states, model (c)'s shape), and for
// BEAM_SPARSE as a function of how many states a frame has within the beam. On a GPU the 16-bit
// encodings are made by the device (kernels/cuda/encode_rows_kernel); BEAM_SPARSE, FLOAT32 and state
// subsets are always encoded here.
//
//   response_encoder_bench [--benchmark_filter=BeamSparse]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "server/rpc/response_encoder.h"

namespace gmmscore::server {
namespace {

constexpr int32_t kFrames = 10;
constexpr int32_t kStates = 5000;
constexpr float kBeam = 10.0f;

// Rows whose best score is -70 with `in_beam` states (the best included) within kBeam of it, the
// rest up to 80 nats below, in random state order.
Matrix Scores(int32_t in_beam, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> near(-70.0f - kBeam + 0.01f, -70.0f);
  std::uniform_real_distribution<float> far(-150.0f, -70.0f - kBeam - 0.01f);
  Matrix m(kFrames, kStates);
  std::vector<int32_t> order(kStates);
  for (int32_t t = 0; t < kFrames; ++t) {
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    float* row = m.row(t);
    for (int32_t i = 0; i < kStates; ++i)
      row[order[size_t(i)]] = i < in_beam ? near(rng) : far(rng);
    row[order[0]] = -70.0f;
  }
  return m;
}

void Encode(benchmark::State& state, v1::StreamConfig::Encoding encoding, int32_t in_beam) {
  EncoderOptions options;
  options.encoding = encoding;
  options.beam = kBeam;
  options.max_states = 500;
  ResponseEncoder encoder(options);
  std::vector<Matrix> windows;
  for (uint32_t seed = 1; seed <= 8; ++seed) windows.push_back(Scores(in_beam, seed));
  size_t next = 0;
  int64_t bytes = 0;
  for (auto _ : state) {
    v1::ScoreResponse response;
    encoder.Encode(windows[next], &response);
    next = (next + 1) % windows.size();
    bytes += int64_t(response.scores().size() + response.sparse_states().size());
    benchmark::DoNotOptimize(response);
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * kFrames);  // frames
  state.counters["response_bytes"] =
      benchmark::Counter(double(bytes) / double(std::max<int64_t>(1, state.iterations())));
}

void BM_Relative16(benchmark::State& state) { Encode(state, v1::StreamConfig::RELATIVE16, 100); }
void BM_Float16(benchmark::State& state) { Encode(state, v1::StreamConfig::FLOAT16, 100); }
void BM_Float32(benchmark::State& state) { Encode(state, v1::StreamConfig::FLOAT32, 100); }
// Beam 10, at most 500 states a frame (bench-stream's defaults).
void BM_BeamSparse(benchmark::State& state) {
  Encode(state, v1::StreamConfig::BEAM_SPARSE, int32_t(state.range(0)));
}

BENCHMARK(BM_Relative16);
BENCHMARK(BM_Float16);
BENCHMARK(BM_Float32);
BENCHMARK(BM_BeamSparse)->Arg(1)->Arg(30)->Arg(300)->Arg(3000);

}  // namespace
}  // namespace gmmscore::server

BENCHMARK_MAIN();

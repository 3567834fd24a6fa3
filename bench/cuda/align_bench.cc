// align_bench: frames aligned per second by the CPU aligner (Kaldi's FasterDecoder semantics, one
// thread, gmm-align-compiled's default beam of 200) and by the batched exact GPU Viterbi, on the
// same utterances in the same run. Viterbi only: the scores are random log-likelihoods, made
// before the clocks start (scoring is measured by cuda_bench). The GPU time counts the upload of
// the graphs and scores and the download of the alignments, one launch for the whole batch.
//   case (ii'): left-to-right graphs of 300 states (100 three-state phones with self-loops),
//     utterances of 1000 frames, a model of 5001 pdfs; the GPU batch has `utterances` of them,
//     the CPU aligns 4 (its frames/s does not depend on the count).
// Usage: align_bench [utterances]   (default 100)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "align/faster_viterbi.h"
#include "align/transition_probs.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_viterbi.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

using Clock = std::chrono::steady_clock;

// 1667 phones of one topology: three emitting states, self-loop 0.75, forward 0.25.
absl::StatusOr<TransitionModel> ThreeStateModel(int32_t phones) {
  HmmTopology topo;
  for (int32_t p = 1; p <= phones; ++p) topo.phones.push_back(p);
  topo.phone_to_entry.assign(size_t(phones) + 1, 0);
  topo.phone_to_entry[0] = -1;
  std::vector<HmmState> states(4);
  for (int32_t h = 0; h < 3; ++h) {
    states[size_t(h)] = {h, h, {{h, 0.75f}, {h + 1, 0.25f}}};
  }
  topo.entries.push_back(states);
  std::vector<TransitionTuple> tuples;
  std::vector<float> log_probs = {0.0f};
  for (int32_t p = 1; p <= phones; ++p) {
    for (int32_t h = 0; h < 3; ++h) {
      const int32_t pdf = 3 * (p - 1) + h;
      tuples.push_back({p, h, pdf, pdf});
      log_probs.push_back(std::log(0.75f));
      log_probs.push_back(std::log(0.25f));
    }
  }
  return TransitionModel::Create(std::move(topo), std::move(tuples), std::move(log_probs));
}

// A left-to-right graph through `phones` random phones: each HMM state a graph state with its
// self-loop and its forward arc (transition-ids 2k+1 and 2k+2 of tuple k).
AlignGraph LeftToRight(std::mt19937& rng, int32_t phones, int32_t num_phones) {
  std::uniform_int_distribution<int32_t> phone(1, num_phones);
  AlignGraph g;
  g.start = 0;
  for (int32_t i = 0; i < phones; ++i) {
    const int32_t p = phone(rng);
    for (int32_t h = 0; h < 3; ++h) {
      const int32_t tuple = 3 * (p - 1) + h;
      const int32_t s = g.num_states();
      g.arc_begin.push_back(int32_t(g.arcs.size()));
      g.final_cost.push_back(AlignGraph::kNotFinal);
      g.arcs.push_back({2 * tuple + 1, 0, 0.0f, s});
      g.arcs.push_back({2 * tuple + 2, 0, 0.0f, s + 1});
    }
  }
  g.arc_begin.push_back(int32_t(g.arcs.size()));
  g.final_cost.push_back(0.0f);
  g.arc_begin.push_back(int32_t(g.arcs.size()));
  return g;
}

absl::Status Run(int32_t utterances) {
  constexpr int32_t kPhones = 1667, kGraphPhones = 100, kFrames = 1000, kCpuUtterances = 4;
  GMM_ASSIGN_OR_RETURN(const TransitionModel tm, ThreeStateModel(kPhones));
  std::mt19937 rng(2026);
  std::normal_distribution<float> score(-80.0f, 10.0f);
  std::vector<AlignGraph> graphs;
  std::vector<Matrix> loglikes;
  for (int32_t u = 0; u < utterances; ++u) {
    graphs.push_back(LeftToRight(rng, kGraphPhones, kPhones));
    GMM_RETURN_IF_ERROR(AddTransitionProbs(tm, 1.0f, 0.1f, &graphs.back()));
    Matrix m(kFrames, tm.NumPdfs());
    for (float& x : m.data) x = score(rng);
    loglikes.push_back(std::move(m));
  }
  std::printf("case (ii'): %d utterances x %d frames, graphs of %d states, %d pdfs\n", utterances,
              kFrames, graphs[0].num_states(), tm.NumPdfs());

  // CPU, one thread.
  int32_t cpu_aligned = 0;
  const Clock::time_point cpu_start = Clock::now();
  for (int32_t u = 0; u < kCpuUtterances; ++u) {
    FasterViterbi decoder(graphs[size_t(u)], tm, {.beam = 200.0f});
    decoder.Decode(loglikes[size_t(u)], 0.1f);
    cpu_aligned += decoder.ReachedFinal() ? 1 : 0;
  }
  const double cpu_s = std::chrono::duration<double>(Clock::now() - cpu_start).count();
  const double cpu_fps = double(kCpuUtterances) * kFrames / cpu_s;

  // GPU: one warm-up batch, then the timed one.
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<CudaViterbi> gpu, CudaViterbi::Create(0));
  std::vector<ViterbiUtterance> batch;
  for (int32_t u = 0; u < utterances; ++u)
    batch.push_back({&graphs[size_t(u)], &loglikes[size_t(u)]});
  GMM_RETURN_IF_ERROR(gpu->Align({batch.data(), 1}, tm, 0.1f).status());
  const Clock::time_point gpu_start = Clock::now();
  GMM_ASSIGN_OR_RETURN(const std::vector<ViterbiResult> results, gpu->Align(batch, tm, 0.1f));
  const double gpu_s = std::chrono::duration<double>(Clock::now() - gpu_start).count();
  const double gpu_fps = double(utterances) * kFrames / gpu_s;
  int32_t gpu_aligned = 0, same = 0;
  for (int32_t u = 0; u < utterances; ++u) gpu_aligned += results[size_t(u)].reached_final;
  for (int32_t u = 0; u < kCpuUtterances; ++u) {
    FasterViterbi decoder(graphs[size_t(u)], tm, {.beam = 200.0f});
    decoder.Decode(loglikes[size_t(u)], 0.1f);
    const auto path = decoder.BestPath();
    same += path && path->transition_ids == results[size_t(u)].transition_ids;
  }
  std::printf("| path | utterances | frames/s | x real time | s |\n|---|---:|---:|---:|---:|\n");
  std::printf("| CPU FasterViterbi, 1 thread, beam 200 | %d | %.3g | %.3g | %.3f |\n",
              kCpuUtterances, cpu_fps, cpu_fps / 100.0, cpu_s);
  std::printf("| GPU batched exact Viterbi (transfers incl.) | %d | %.3g | %.3g | %.3f |\n",
              utterances, gpu_fps, gpu_fps / 100.0, gpu_s);
  std::printf(
      "GPU / CPU frames/s: %.1fx; aligned: CPU %d/%d, GPU %d/%d; same path as the CPU's "
      "on %d of %d\n",
      gpu_fps / cpu_fps, cpu_aligned, kCpuUtterances, gpu_aligned, utterances, same,
      kCpuUtterances);
  return absl::OkStatus();
}

}  // namespace
}  // namespace gmmscore

int main(int argc, char** argv) {
  const int utterances = argc > 1 ? std::atoi(argv[1]) : 100;
  const absl::Status s = gmmscore::Run(utterances);
  if (!s.ok()) {
    std::fprintf(stderr, "align_bench: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}

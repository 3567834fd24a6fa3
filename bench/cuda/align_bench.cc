// align_bench: frames aligned per second, scoring included, by the CPU (CpuScorer on one thread,
// then the aligner with Kaldi's FasterDecoder semantics and gmm-align-compiled's default beam of
// 200) and by the GPU (CudaAligner: features up, scored into device memory by the fast kernels,
// one batched exact Viterbi launch, alignments down), on the same utterances in the same run; the
// CPU's scoring and Viterbi timed apart.
//   case (ii): a random model of 5001 states x 32 Gaussians x 39 dims with a three-state
//     left-to-right HMM per phone, left-to-right graphs of 300 states (100 phones), utterances of
//     1000 frames of random features; the GPU aligns `utterances` of them in one call (after a
//     warm-up call that makes the kernel choices), the CPU 2 (its frames/s does not depend on the
//     count).
// Usage: cuda_align_bench [utterances]   (default 1000)
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "align/faster_viterbi.h"
#include "align/transition_probs.h"
#include "kernels/cpu/cpu_scorer.h"
#include "kernels/cuda/cuda_aligner.h"
#include "kernels/cuda/cuda_device.h"
#include "model/random_model.h"
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

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

absl::Status Run(int32_t utterances) {
  constexpr int32_t kPhones = 1667, kGraphPhones = 100, kFrames = 1000, kCpuUtterances = 2;
  GMM_ASSIGN_OR_RETURN(TransitionModel tm, ThreeStateModel(kPhones));
  RandomModelOptions o;
  o.num_states = tm.NumPdfs();
  o.dim = 39;
  o.min_gauss = o.max_gauss = 32;
  o.hmm = std::move(tm);
  const GmmModel model = RandomModel(o, 2026);
  std::mt19937 rng(2026);
  std::vector<AlignGraph> graphs;
  std::vector<Matrix> feats;
  for (int32_t u = 0; u < utterances; ++u) {
    graphs.push_back(LeftToRight(rng, kGraphPhones, kPhones));
    GMM_RETURN_IF_ERROR(AddTransitionProbs(model.hmm(), 1.0f, 0.1f, &graphs.back()));
    feats.push_back(RandomFeatures(kFrames, o.dim, 0.0f, 3.0f, uint32_t(u)));
  }
  std::printf("case (ii): %d utterances x %d frames, graphs of %d states, model %d x %d x %d\n",
              utterances, kFrames, graphs[0].num_states(), model.num_states(), o.max_gauss, o.dim);

  // CPU, one thread: scoring, then Viterbi.
  CpuScorer scorer(model, 1);
  double score_s = 0.0, viterbi_s = 0.0;
  std::vector<std::vector<int32_t>> cpu_paths;
  for (int32_t u = 0; u < kCpuUtterances; ++u) {
    Matrix loglikes;
    Clock::time_point start = Clock::now();
    GMM_RETURN_IF_ERROR(scorer.Score(feats[size_t(u)], &loglikes));
    score_s += Seconds(start);
    start = Clock::now();
    FasterViterbi decoder(graphs[size_t(u)], model.hmm(), {.beam = 200.0f});
    decoder.Decode(loglikes, 0.1f);
    const std::optional<ViterbiPath> path = decoder.BestPath();
    viterbi_s += Seconds(start);
    cpu_paths.push_back(path ? path->transition_ids : std::vector<int32_t>());
  }
  const double cpu_frames = double(kCpuUtterances) * kFrames;

  // GPU: a warm-up call (the kernel choices), then the timed one.
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<CudaAligner> aligner, CudaAligner::Create(model, 0));
  std::vector<AlignInput> batch;
  for (int32_t u = 0; u < utterances; ++u) batch.push_back({&graphs[size_t(u)], &feats[size_t(u)]});
  GMM_RETURN_IF_ERROR(aligner->Align({batch.data(), 1}, 0.1f).status());
  const Clock::time_point start = Clock::now();
  GMM_ASSIGN_OR_RETURN(const std::vector<ViterbiResult> results, aligner->Align(batch, 0.1f));
  const double gpu_s = Seconds(start);
  const double gpu_fps = double(utterances) * kFrames / gpu_s;
  int32_t gpu_aligned = 0, same = 0;
  for (int32_t u = 0; u < utterances; ++u) gpu_aligned += results[size_t(u)].reached_final;
  for (int32_t u = 0; u < kCpuUtterances; ++u) {
    same += cpu_paths[size_t(u)] == results[size_t(u)].transition_ids;
  }
  const double cpu_fps = cpu_frames / (score_s + viterbi_s);
  std::printf("| path | utterances | frames/s | x real time | s |\n|---|---:|---:|---:|---:|\n");
  std::printf("| CPU 1 thread: CpuScorer | %d | %.3g | %.3g | %.3f |\n", kCpuUtterances,
              cpu_frames / score_s, cpu_frames / score_s / 100.0, score_s);
  std::printf("| CPU 1 thread: Viterbi, beam 200 | %d | %.3g | %.3g | %.3f |\n", kCpuUtterances,
              cpu_frames / viterbi_s, cpu_frames / viterbi_s / 100.0, viterbi_s);
  std::printf("| CPU 1 thread: both | %d | %.3g | %.3g | %.3f |\n", kCpuUtterances, cpu_fps,
              cpu_fps / 100.0, score_s + viterbi_s);
  std::printf("| GPU CudaAligner: scoring + Viterbi, transfers incl. | %d | %.3g | %.3g | %.3f |\n",
              utterances, gpu_fps, gpu_fps / 100.0, gpu_s);
  std::printf(
      "GPU / CPU 1 thread frames/s: %.0fx; aligned: GPU %d of %d; same path as the "
      "CPU's on %d of %d\n",
      gpu_fps / cpu_fps, gpu_aligned, utterances, same, kCpuUtterances);
  return absl::OkStatus();
}

}  // namespace
}  // namespace gmmscore

int main(int argc, char** argv) {
  const int utterances = argc > 1 ? std::atoi(argv[1]) : 1000;
  const absl::Status s = gmmscore::Run(utterances);
  if (!s.ok()) {
    std::fprintf(stderr, "align_bench: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}

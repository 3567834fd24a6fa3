// The batched GPU Viterbi (kernels/cuda/cuda_viterbi.h) against the CPU aligner with a beam too
// wide to prune (align/faster_viterbi.h): the same paths, except where two paths tie exactly (the
// two keep different ones: the CPU the first token it found, the GPU the first incoming arc in
// source order), the same scores, the same verdict on utterances with no path; many utterances in
// one launch, epsilon arcs, one frame, graphs larger than a thread block. Skips without a GPU.
#include "kernels/cuda/cuda_viterbi.h"

#include <gtest/gtest.h>

#include "align/align_utterance.h"
#include "align/faster_viterbi.h"
#include "align/transition_probs.h"
#include "formats/kaldi_fst.h"
#include "formats/matrix_lookup.h"
#include "kernels/cpu/cpu_scorer.h"
#include "kernels/cuda/cuda_aligner.h"
#include "tests/align_test_util.h"
#include "tests/cuda_test_util.h"
#include "tests/test_util.h"

namespace gmmscore::testing {
namespace {

using CudaViterbiTest = WithCudaDevice<::testing::Test>;

TEST_F(CudaViterbiTest, FindsTheCpuAlignersPathsForAWholeBatchInOneLaunch) {
  const TransitionModel& tm = KaldiMono();
  std::mt19937 rng(11);
  std::vector<AlignGraph> graphs;
  std::vector<Matrix> loglikes;
  for (int32_t u = 0; u < 300; ++u) {
    // Small graphs, and some of more states than a block has threads.
    const int32_t states = u % 10 == 0 ? 300 + u : 2 + u % 9;
    graphs.push_back(RandomGraph(rng, states, tm.NumTransitionIds()));
    ASSERT_TRUE(AddTransitionProbs(tm, 1.0f, 0.1f, &graphs.back()).ok());
    loglikes.push_back(RandomLoglikes(rng, 1 + u % 40, tm.NumPdfs()));
  }
  std::vector<ViterbiUtterance> batch;
  for (size_t u = 0; u < graphs.size(); ++u) batch.push_back({&graphs[u], &loglikes[u]});
  auto gpu = CudaViterbi::Create(0);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  auto results = (*gpu)->Align(batch, tm, 0.1f);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), graphs.size());
  int32_t aligned = 0, unreachable = 0, same_path = 0;
  for (size_t u = 0; u < graphs.size(); ++u) {
    FasterViterbi cpu(graphs[u], tm, {.beam = 1e9f, .min_active = 1 << 30});
    cpu.Decode(loglikes[u], 0.1f);
    const ViterbiResult& r = (*results)[u];
    ASSERT_EQ(r.reached_final, cpu.ReachedFinal()) << "utterance " << u;
    if (!r.reached_final) {
      ++unreachable;
      continue;
    }
    const std::optional<ViterbiPath> path = cpu.BestPath();
    ASSERT_TRUE(path.has_value());
    const float cpu_score = -(path->graph_cost + path->acoustic_cost);
    EXPECT_NEAR(r.score, cpu_score, 1e-3f * std::max(1.0f, std::abs(cpu_score))) << u;
    ASSERT_EQ(r.transition_ids.size(), size_t(loglikes[u].rows)) << u;
    if (r.transition_ids == path->transition_ids) ++same_path;
    ++aligned;
  }
  EXPECT_GT(aligned, 100);
  EXPECT_GT(unreachable, 0);
  // Random scores in [-30, -5] seldom tie exactly: nearly every path is the CPU's.
  EXPECT_GE(same_path, aligned - 2) << same_path << " of " << aligned;
}

// The real Kaldi data scored and aligned on the device: the CPU aligner's alignments (which are
// Kaldi's ali.txt) and per-frame log-likelihoods within the scoring tolerance.
TEST_F(CudaViterbiTest, AlignerScoresAndAlignsKaldisUtterancesOnTheDevice) {
  auto loaded = LoadModel(DataPath("kaldi-mono/final.mdl"));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const GmmModel& model = loaded->model;
  auto graphs = FstTableReader::Open("ark:" + DataPath("kaldi-mono/graphs.fsts"));
  ASSERT_TRUE(graphs.ok()) << graphs.status();
  auto feats = MatrixLookup::Open("ark:" + DataPath("kaldi-mono/feats.ark"));
  ASSERT_TRUE(feats.ok()) << feats.status();
  AlignOptions options;
  options.acoustic_scale = 0.1f;
  options.self_loop_scale = 0.1f;
  std::vector<AlignGraph> prepared;
  std::vector<Matrix> features;
  std::vector<UtteranceAlignment> cpu;
  std::string key;
  AlignGraph graph;
  while (*(*graphs)->Next(&key, &graph)) {
    std::optional<Matrix> f = *feats->Take(key);
    ASSERT_TRUE(f.has_value()) << key;
    Matrix loglikes;
    ASSERT_TRUE(CpuScorer(model, 1).Score(*f, &loglikes).ok());
    cpu.push_back(AlignUtterance(options, model.hmm(), graph, loglikes));
    ASSERT_TRUE(cpu.back().status.ok()) << key;
    ASSERT_TRUE(AddTransitionProbs(model.hmm(), 1.0f, 0.1f, &graph).ok());
    prepared.push_back(graph);
    features.push_back(*std::move(f));
  }
  ASSERT_EQ(prepared.size(), 6u);
  std::vector<AlignInput> batch;
  for (size_t u = 0; u < prepared.size(); ++u) batch.push_back({&prepared[u], &features[u]});
  auto aligner = CudaAligner::Create(model, 0);
  ASSERT_TRUE(aligner.ok()) << aligner.status();
  auto results = (*aligner)->Align(batch, 0.1f);
  ASSERT_TRUE(results.ok()) << results.status();
  for (size_t u = 0; u < prepared.size(); ++u) {
    const ViterbiResult& r = (*results)[u];
    ASSERT_TRUE(r.reached_final) << u;
    EXPECT_EQ(r.transition_ids, cpu[u].transition_ids) << "utterance " << u;
    EXPECT_NEAR(r.score, cpu[u].score, 0.01f) << u;
    ASSERT_EQ(r.frame_loglikes.size(), cpu[u].frame_loglikes.size());
    for (size_t t = 0; t < r.frame_loglikes.size(); ++t) {
      EXPECT_NEAR(r.frame_loglikes[t], cpu[u].frame_loglikes[t], 2e-3) << u << ", frame " << t;
    }
  }
}

TEST_F(CudaViterbiTest, RefusesEpsilonCyclesNamingTheUtterance) {
  const TransitionModel& tm = KaldiMono();
  GraphBuilder cycle;
  cycle.AddState(0.0f);
  cycle.AddState();
  cycle.AddArc(0, 0, 0.0f, 1);
  cycle.AddArc(1, 0, 0.0f, 0);
  cycle.AddArc(0, 5, 0.0f, 0);
  const AlignGraph g = cycle.Build();
  const Matrix ll(3, tm.NumPdfs());
  auto gpu = CudaViterbi::Create(0);
  ASSERT_TRUE(gpu.ok());
  const ViterbiUtterance one[] = {{&g, &ll}};
  const auto refused = (*gpu)->Align(one, tm, 1.0f);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("utterance 0: epsilon arcs form a cycle"),
            std::string::npos)
      << refused.status();
}

}  // namespace
}  // namespace gmmscore::testing

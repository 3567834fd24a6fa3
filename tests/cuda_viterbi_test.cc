// The batched GPU Viterbi (kernels/cuda/align/cuda_viterbi.h) against the CPU aligner with a beam
// too wide to prune (align/faster_viterbi.h): the same paths, except where two paths tie exactly
// (the two keep different ones: the CPU the first token it found, the GPU the first incoming arc in
// source order), the same scores, the same verdict on utterances with no path; many utterances in
// one launch, epsilon arcs, one frame, graphs larger than a thread block; back-pointers held a
// segment at a time. Skips without a GPU.
#include "kernels/cuda/align/cuda_viterbi.h"

#include <gtest/gtest.h>

#include "align/align_utterance.h"
#include "align/faster_viterbi.h"
#include "align/transition_probs.h"
#include "formats/kaldi_fst.h"
#include "formats/matrix_lookup.h"
#include "kernels/cpu/cpu_scorer.h"
#include "kernels/cuda/align/cuda_aligner.h"
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

// Back-pointers held a segment at a time (checkpoints, the traceback recomputing each segment)
// give exactly the whole utterance's result: the same arithmetic in the same order. Segments of
// one frame, of a length that divides the utterance and one that does not, longer than it; one
// frame, epsilon arcs, unreachable utterances.
TEST_F(CudaViterbiTest, CheckpointedTracebackGivesTheWholeUtterancesResult) {
  const TransitionModel& tm = KaldiMono();
  std::mt19937 rng(23);
  std::vector<AlignGraph> graphs;
  std::vector<Matrix> loglikes;
  const int32_t lengths[] = {1, 2, 3, 7, 12, 40, 41, 257, 1000, 2311};
  for (int32_t u = 0; u < 60; ++u) {
    graphs.push_back(RandomGraph(rng, u % 7 == 0 ? 300 + u : 3 + u % 11, tm.NumTransitionIds()));
    ASSERT_TRUE(AddTransitionProbs(tm, 1.0f, 0.1f, &graphs.back()).ok());
    loglikes.push_back(RandomLoglikes(rng, lengths[u % 10], tm.NumPdfs()));
  }
  std::vector<ViterbiUtterance> batch;
  for (size_t u = 0; u < graphs.size(); ++u) batch.push_back({&graphs[u], &loglikes[u]});
  auto gpu = CudaViterbi::Create(0);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  auto whole = (*gpu)->Align(batch, tm, 0.1f);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_FALSE((*gpu)->checkpointed());
  int32_t reached = 0;
  for (const ViterbiResult& r : *whole) reached += r.reached_final ? 1 : 0;
  EXPECT_GT(reached, 20);
  EXPECT_LT(reached, 60);
  for (const int32_t k : {1, 2, 3, 4, 10, 100, 5000}) {
    (*gpu)->set_segment_frames(k);
    auto segmented = (*gpu)->Align(batch, tm, 0.1f);
    ASSERT_TRUE(segmented.ok()) << segmented.status();
    EXPECT_TRUE((*gpu)->checkpointed());
    for (size_t u = 0; u < graphs.size(); ++u) {
      const ViterbiResult &a = (*whole)[u], &b = (*segmented)[u];
      ASSERT_EQ(a.reached_final, b.reached_final) << "segments of " << k << ", utterance " << u;
      if (!a.reached_final) continue;
      EXPECT_EQ(a.score, b.score) << "segments of " << k << ", utterance " << u;
      EXPECT_EQ(a.transition_ids, b.transition_ids) << "segments of " << k << ", utterance " << u;
      EXPECT_EQ(a.frame_loglikes, b.frame_loglikes) << "segments of " << k << ", utterance " << u;
    }
  }
}

// Utterances of many states are aligned by the whole GPU (a cooperative launch each): the same
// results as a block's, bit for bit, alone or with checkpoints; by default from 8192 states, here
// a graph of 9000 in a batch of small ones, against the CPU aligner.
TEST_F(CudaViterbiTest, GridLaunchGivesTheBlocksResult) {
  const TransitionModel& tm = KaldiMono();
  std::mt19937 rng(31);
  std::vector<AlignGraph> graphs;
  std::vector<Matrix> loglikes;
  for (int32_t u = 0; u < 24; ++u) {
    graphs.push_back(RandomGraph(rng, u == 5 ? 9000 : 2 + u * 37, tm.NumTransitionIds()));
    ASSERT_TRUE(AddTransitionProbs(tm, 1.0f, 0.1f, &graphs.back()).ok());
    loglikes.push_back(RandomLoglikes(rng, u == 5 ? 300 : 1 + u * 13, tm.NumPdfs()));
  }
  std::vector<ViterbiUtterance> batch;
  for (size_t u = 0; u < graphs.size(); ++u) batch.push_back({&graphs[u], &loglikes[u]});
  auto gpu = CudaViterbi::Create(0);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  auto by_default = (*gpu)->Align(batch, tm, 0.1f);
  ASSERT_TRUE(by_default.ok()) << by_default.status();
  FasterViterbi cpu(graphs[5], tm, {.beam = 1e9f, .min_active = 1 << 30});
  cpu.Decode(loglikes[5], 0.1f);
  ASSERT_TRUE(cpu.ReachedFinal());
  ASSERT_TRUE((*by_default)[5].reached_final);
  EXPECT_EQ((*by_default)[5].transition_ids, cpu.BestPath()->transition_ids);

  (*gpu)->set_grid_states(1 << 30);  // every utterance a block
  auto blocks = (*gpu)->Align(batch, tm, 0.1f);
  ASSERT_TRUE(blocks.ok()) << blocks.status();
  for (const int32_t k : {0, 7}) {
    (*gpu)->set_grid_states(1);  // every utterance the whole GPU
    (*gpu)->set_segment_frames(k);
    auto grid = (*gpu)->Align(batch, tm, 0.1f);
    ASSERT_TRUE(grid.ok()) << grid.status();
    int32_t reached = 0;
    for (size_t u = 0; u < graphs.size(); ++u) {
      const ViterbiResult &a = (*blocks)[u], &b = (*grid)[u], &c = (*by_default)[u];
      ASSERT_EQ(a.reached_final, b.reached_final) << "utterance " << u;
      ASSERT_EQ(a.reached_final, c.reached_final) << "utterance " << u;
      if (!a.reached_final) continue;
      ++reached;
      EXPECT_EQ(a.score, b.score) << "utterance " << u;
      EXPECT_EQ(a.score, c.score) << "utterance " << u;
      EXPECT_EQ(a.transition_ids, b.transition_ids) << "utterance " << u;
      EXPECT_EQ(a.transition_ids, c.transition_ids) << "utterance " << u;
      EXPECT_EQ(a.frame_loglikes, b.frame_loglikes) << "utterance " << u;
    }
    EXPECT_GT(reached, 8);
  }
}

// A long utterance through a long left-to-right graph (the shape of an hour's alignment, smaller):
// the whole GPU with whole back-pointers, with segments, and a block with segments find the same
// path. (Not compared with the CPU aligner: its beam of 200 prunes every token that could reach
// the final state, as it does on the hour of align_bench's case iii.)
TEST_F(CudaViterbiTest, LongLeftToRightUtteranceIsTheSameEveryWay) {
  const TransitionModel& tm = KaldiMono();
  std::mt19937 rng(37);
  std::uniform_int_distribution<int32_t> tid(1, tm.NumTransitionIds());
  constexpr int32_t kStates = 12000, kFrames = 40000;
  GraphBuilder b;
  for (int32_t s = 0; s < kStates; ++s) b.AddState(s == kStates - 1 ? 0.0f : AlignGraph::kNotFinal);
  for (int32_t s = 0; s < kStates; ++s) {
    b.AddArc(s, tid(rng), 0.0f, s);
    if (s + 1 < kStates) b.AddArc(s, tid(rng), 0.0f, s + 1);
  }
  AlignGraph graph = b.Build();
  ASSERT_TRUE(AddTransitionProbs(tm, 1.0f, 0.1f, &graph).ok());
  const Matrix ll = RandomLoglikes(rng, kFrames, tm.NumPdfs());
  const ViterbiUtterance one[] = {{&graph, &ll}};
  auto gpu = CudaViterbi::Create(0);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  auto grid = (*gpu)->Align(one, tm, 0.1f);
  ASSERT_TRUE(grid.ok()) << grid.status();
  ASSERT_TRUE((*grid)[0].reached_final);
  (*gpu)->set_segment_frames(283);
  auto grid_segments = (*gpu)->Align(one, tm, 0.1f);
  ASSERT_TRUE(grid_segments.ok()) << grid_segments.status();
  (*gpu)->set_grid_states(1 << 30);
  auto block_segments = (*gpu)->Align(one, tm, 0.1f);
  ASSERT_TRUE(block_segments.ok()) << block_segments.status();
  EXPECT_EQ((*grid)[0].score, (*grid_segments)[0].score);
  EXPECT_EQ((*grid)[0].score, (*block_segments)[0].score);
  EXPECT_EQ((*grid)[0].transition_ids, (*grid_segments)[0].transition_ids);
  EXPECT_EQ((*grid)[0].transition_ids, (*block_segments)[0].transition_ids);
}

// Where the whole back-pointers do not fit the memory budget, segments are chosen by themselves;
// where not even those fit, ResourceExhausted says how much was needed.
TEST_F(CudaViterbiTest, CheckpointsWhereTheBackPointersDoNotFit) {
  const TransitionModel& tm = KaldiMono();
  std::mt19937 rng(29);
  AlignGraph graph = RandomGraph(rng, 300, tm.NumTransitionIds());
  ASSERT_TRUE(AddTransitionProbs(tm, 1.0f, 0.1f, &graph).ok());
  const Matrix ll = RandomLoglikes(rng, 4000, tm.NumPdfs());
  const ViterbiUtterance one[] = {{&graph, &ll}};
  auto gpu = CudaViterbi::Create(0);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  auto whole = (*gpu)->Align(one, tm, 0.1f);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_TRUE((*whole)[0].reached_final);
  // 4001 x 300 back-pointers take 4.8 MB; segments of 90 frames and 44 checkpoints, 0.2 MB.
  (*gpu)->set_memory_budget(1 << 20);
  auto fitted = (*gpu)->Align(one, tm, 0.1f);
  ASSERT_TRUE(fitted.ok()) << fitted.status();
  EXPECT_TRUE((*gpu)->checkpointed());
  EXPECT_EQ((*fitted)[0].transition_ids, (*whole)[0].transition_ids);
  EXPECT_EQ((*fitted)[0].score, (*whole)[0].score);
  (*gpu)->set_memory_budget(1 << 10);
  auto refused = (*gpu)->Align(one, tm, 0.1f);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted) << refused.status();
  EXPECT_NE(refused.status().message().find("checkpoint costs"), std::string::npos)
      << refused.status();
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

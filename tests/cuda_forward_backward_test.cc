// The batched GPU forward-backward (kernels/cuda/align/cuda_forward_backward.h) against the CPU
// reference (align/forward_backward.h) on random graphs with epsilon arcs, one frame to a few
// hundred, unreachable utterances, graphs larger than a thread block, a batch run in halves for
// want of room; and on the Kaldi data, scored by the CPU and by the device. Skips without a GPU.
#include "kernels/cuda/align/cuda_forward_backward.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "align/forward_backward.h"
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

using CudaForwardBackwardTest = WithCudaDevice<::testing::Test>;

// The GPU's result equals the CPU's: the same verdict, the total within double rounding (or
// total_tolerance, where the scores differ), and each frame's posteriors within float rounding
// (or posterior_tolerance), summing to 1.
void ExpectSame(const PosteriorResult& gpu, const absl::StatusOr<ForwardBackwardResult>& cpu,
                size_t u, double total_tolerance = 0.0, float posterior_tolerance = 1e-5f) {
  ASSERT_EQ(gpu.reached_final, cpu.ok()) << "utterance " << u << ": " << cpu.status();
  if (!cpu.ok()) return;
  EXPECT_NEAR(gpu.total_log_likelihood, cpu->total_log_likelihood,
              total_tolerance + 1e-9 * std::max(1.0, std::abs(cpu->total_log_likelihood)))
      << "utterance " << u;
  ASSERT_EQ(gpu.posteriors.size(), cpu->posteriors.size()) << "utterance " << u;
  for (size_t t = 0; t < cpu->posteriors.size(); ++t) {
    std::map<int32_t, float> mine(gpu.posteriors[t].begin(), gpu.posteriors[t].end());
    std::map<int32_t, float> theirs(cpu->posteriors[t].begin(), cpu->posteriors[t].end());
    double sum = 0.0;
    for (const auto& [tid, p] : mine) sum += p;
    EXPECT_NEAR(sum, 1.0, 1e-4) << "utterance " << u << ", frame " << t;
    for (const auto& [tid, p] : theirs) {
      const float q = mine.contains(tid) ? mine.at(tid) : 0.0f;
      EXPECT_NEAR(q, p, posterior_tolerance)
          << "utterance " << u << ", frame " << t << ", tid " << tid;
    }
    for (const auto& [tid, p] : mine) {
      if (!theirs.contains(tid)) {
        EXPECT_LT(p, std::max(1e-30f, posterior_tolerance)) << "utterance " << u << ", tid " << tid;
      }
    }
  }
}

TEST_F(CudaForwardBackwardTest, EqualsTheCpuReferenceForABatch) {
  const TransitionModel& tm = KaldiMono();
  std::mt19937 rng(41);
  std::vector<AlignGraph> graphs;
  std::vector<Matrix> loglikes;
  for (int32_t u = 0; u < 120; ++u) {
    const int32_t states = u % 15 == 0 ? 280 + u : 2 + u % 9;
    graphs.push_back(RandomGraph(rng, states, tm.NumTransitionIds()));
    ASSERT_TRUE(AddTransitionProbs(tm, 1.0f, 0.1f, &graphs.back()).ok());
    loglikes.push_back(RandomLoglikes(rng, 1 + (u * 7) % 60, tm.NumPdfs()));
  }
  std::vector<ViterbiUtterance> batch;
  for (size_t u = 0; u < graphs.size(); ++u) batch.push_back({&graphs[u], &loglikes[u]});
  auto gpu = CudaForwardBackward::Create(0);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  auto results = (*gpu)->Run(batch, tm, 0.1f);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), graphs.size());
  int32_t reached = 0;
  for (size_t u = 0; u < graphs.size(); ++u) {
    ExpectSame((*results)[u], ForwardBackward(graphs[u], tm, loglikes[u], 0.1f), u);
    reached += (*results)[u].reached_final;
  }
  EXPECT_GT(reached, 40);
  EXPECT_LT(reached, 120);

  // Too little room for the batch: run in halves, the same results.
  (*gpu)->set_memory_budget(1 << 20);
  auto halves = (*gpu)->Run(batch, tm, 0.1f);
  ASSERT_TRUE(halves.ok()) << halves.status();
  for (size_t u = 0; u < graphs.size(); ++u) {
    EXPECT_EQ((*halves)[u].total_log_likelihood, (*results)[u].total_log_likelihood) << u;
    EXPECT_EQ((*halves)[u].posteriors, (*results)[u].posteriors) << u;
  }
  (*gpu)->set_memory_budget(1 << 10);
  EXPECT_EQ((*gpu)->Run(batch, tm, 0.1f).status().code(), absl::StatusCode::kResourceExhausted);
}

// The Kaldi data, scored by the CPU, through its compiled training graphs.
TEST_F(CudaForwardBackwardTest, EqualsTheCpuReferenceOnKaldisUtterances) {
  auto loaded = LoadModel(DataPath("kaldi-mono/final.mdl"));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const GmmModel& model = loaded->model;
  auto graphs = FstTableReader::Open("ark:" + DataPath("kaldi-mono/graphs.fsts"));
  ASSERT_TRUE(graphs.ok()) << graphs.status();
  auto feats = MatrixLookup::Open("ark:" + DataPath("kaldi-mono/feats.ark"));
  ASSERT_TRUE(feats.ok()) << feats.status();
  std::vector<AlignGraph> prepared;
  std::vector<Matrix> loglikes, features;
  std::string key;
  AlignGraph graph;
  while (*(*graphs)->Next(&key, &graph)) {
    std::optional<Matrix> f = *feats->Take(key);
    ASSERT_TRUE(f.has_value()) << key;
    Matrix ll;
    ASSERT_TRUE(CpuScorer(model, 1).Score(*f, &ll).ok());
    ASSERT_TRUE(AddTransitionProbs(model.hmm(), 1.0f, 0.1f, &graph).ok());
    prepared.push_back(graph);
    loglikes.push_back(std::move(ll));
    features.push_back(*std::move(f));
  }
  ASSERT_EQ(prepared.size(), 6u);
  std::vector<ViterbiUtterance> batch;
  for (size_t u = 0; u < prepared.size(); ++u) batch.push_back({&prepared[u], &loglikes[u]});
  auto gpu = CudaForwardBackward::Create(0);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  auto results = (*gpu)->Run(batch, model.hmm(), 0.1f);
  ASSERT_TRUE(results.ok()) << results.status();
  for (size_t u = 0; u < prepared.size(); ++u) {
    ExpectSame((*results)[u], ForwardBackward(prepared[u], model.hmm(), loglikes[u], 0.1f), u);
  }
  // Scored on the device too (CudaAligner::Posteriors, what `gmmscore align --posteriors` runs
  // on a GPU): within what the two scorers' 1e-3 differences make of it.
  std::vector<AlignInput> inputs;
  for (size_t u = 0; u < prepared.size(); ++u) inputs.push_back({&prepared[u], &features[u]});
  auto aligner = CudaAligner::Create(model, 0);
  ASSERT_TRUE(aligner.ok()) << aligner.status();
  auto scored = (*aligner)->Posteriors(inputs, 0.1f);
  ASSERT_TRUE(scored.ok()) << scored.status();
  for (size_t u = 0; u < prepared.size(); ++u) {
    ExpectSame((*scored)[u], ForwardBackward(prepared[u], model.hmm(), loglikes[u], 0.1f), u, 0.5,
               2e-3f);
  }
}

}  // namespace
}  // namespace gmmscore::testing

// The Aligner implementations (align/aligner.h) against AlignUtterance and ForwardBackward on the
// same scores: the beam aligner over a scorer, and the device aligner over a stand-in device that
// aligns exactly on the CPU, with graphs that do not fit the model, utterances with no path,
// careful graphs and posteriors asked for. "Features" here are the log-likelihoods themselves (a
// scorer that passes them through), so that the test controls the scores.
#include <gtest/gtest.h>

#include <random>

#include "align/align_graph_preparation.h"
#include "align/beam_aligner.h"
#include "align/careful_graph.h"
#include "align/device_aligner.h"
#include "align/faster_viterbi.h"
#include "align/forward_backward.h"
#include "tests/align_test_util.h"

namespace gmmscore {
namespace {

// Scores that are the features.
class PassThroughScorer final : public FusedScorer {
 public:
  std::string name() const override { return "pass-through"; }
  absl::Status Score(const Matrix& feats, Matrix* fused) const override {
    *fused = feats;
    return absl::OkStatus();
  }
};

// A device that aligns on the CPU, exactly (a beam no path falls out of), and says what it got.
class CpuStandInDevice final : public BatchAligner {
 public:
  explicit CpuStandInDevice(const TransitionModel& model) : model_(model) {}

  absl::StatusOr<std::vector<ViterbiResult>> Align(std::span<const AlignInput> utterances,
                                                   float acoustic_scale) override {
    aligned_ += int32_t(utterances.size());
    std::vector<ViterbiResult> results;
    for (const AlignInput& u : utterances) {
      FasterViterbi decoder(*u.graph, model_, {.beam = 1e9f});
      decoder.Decode(*u.feats, acoustic_scale);
      ViterbiResult& r = results.emplace_back();
      r.reached_final = decoder.ReachedFinal();
      if (!r.reached_final) continue;
      const std::optional<ViterbiPath> path = decoder.BestPath();
      EXPECT_TRUE(path.has_value());
      r.transition_ids = path->transition_ids;
      r.score = -(path->graph_cost + path->acoustic_cost);
      for (float cost : path->frame_acoustic_costs)
        r.frame_loglikes.push_back(-cost / acoustic_scale);
    }
    return results;
  }

  absl::StatusOr<std::vector<PosteriorResult>> Posteriors(std::span<const AlignInput> utterances,
                                                          float acoustic_scale) override {
    posteriors_ += int32_t(utterances.size());
    std::vector<PosteriorResult> results;
    for (const AlignInput& u : utterances) {
      auto fb = ForwardBackward(*u.graph, model_, *u.feats, acoustic_scale);
      if (!fb.ok()) return fb.status();
      results.push_back({true, fb->total_log_likelihood, fb->posteriors});
    }
    return results;
  }

  int32_t aligned() const { return aligned_; }
  int32_t posteriors() const { return posteriors_; }

 private:
  const TransitionModel& model_;
  int32_t aligned_ = 0, posteriors_ = 0;
};

// Random graphs and scores, and among them a graph whose label is not the model's and one with
// no final state.
struct Batch {
  std::vector<std::string> keys;
  std::vector<AlignGraph> graphs;
  std::vector<Matrix> loglikes;
  std::vector<UtteranceToAlign> inputs;
};

Batch MakeBatch(const TransitionModel& tm, int32_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Batch b;
  for (int32_t i = 0; i < n; ++i) {
    b.keys.push_back("utt" + std::to_string(i));
    b.graphs.push_back(RandomGraph(rng, 2 + i % 6, tm.NumTransitionIds()));
    b.loglikes.push_back(RandomLoglikes(rng, 1 + i % 5, tm.NumPdfs()));
  }
  GraphBuilder beyond;
  beyond.AddState(0.0f);
  beyond.AddArc(0, tm.NumTransitionIds() + 1, 0.0f, 0);
  b.graphs[1] = beyond.Build();
  GraphBuilder no_final;
  no_final.AddState();
  no_final.AddArc(0, 5, 0.0f, 0);
  b.graphs[2] = no_final.Build();
  for (int32_t i = 0; i < n; ++i) {
    b.inputs.push_back({b.keys[size_t(i)], &b.graphs[size_t(i)], &b.loglikes[size_t(i)]});
  }
  return b;
}

// What the aligners must give: AlignUtterance's alignment, and ForwardBackward's posteriors.
void ExpectAsAlignUtterance(const AlignOptions& options, const TransitionModel& tm, const Batch& b,
                            const std::vector<UtteranceAlignment>& got, bool posteriors) {
  ASSERT_EQ(got.size(), b.inputs.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(b.keys[i]);
    const UtteranceAlignment want = AlignUtterance(options, tm, b.graphs[i], b.loglikes[i]);
    EXPECT_EQ(got[i].status.code(), want.status.code()) << got[i].status;
    EXPECT_EQ(got[i].status.message(), want.status.message());
    EXPECT_EQ(got[i].transition_ids, want.transition_ids);
    EXPECT_FLOAT_EQ(got[i].score, want.score);
    EXPECT_FLOAT_EQ(got[i].log_likelihood, want.log_likelihood);
    EXPECT_EQ(got[i].frame_loglikes, want.frame_loglikes);
    if (!posteriors || !want.status.ok()) {
      EXPECT_TRUE(got[i].posteriors.empty());
      continue;
    }
    auto readied =
        PrepareAlignGraph(b.graphs[i], tm, options.transition_scale, options.self_loop_scale);
    ASSERT_TRUE(readied.ok()) << readied.status();
    auto fb = ForwardBackward(*readied, tm, b.loglikes[i], options.acoustic_scale);
    ASSERT_TRUE(fb.ok()) << fb.status();
    EXPECT_EQ(got[i].posteriors, fb->posteriors);
  }
}

TEST(BeamAlignerTest, AlignsEachUtteranceAsAlignUtteranceWithThePosteriorsAsked) {
  const TransitionModel& tm = KaldiMono();
  const Batch b = MakeBatch(tm, 9, 7);
  const PassThroughScorer scorer;
  for (const bool careful : {false, true}) {
    const AlignOptions options{.beam = 4.0f,
                               .retry_beam = 40.0f,
                               .careful = careful,
                               .self_loop_scale = 0.1f,
                               .acoustic_scale = 0.1f};
    BeamAligner aligner(options, tm, scorer);
    EXPECT_EQ(aligner.batch_limits().utterances, 1);
    for (const bool posteriors : {false, true}) {
      auto got = aligner.Align(b.inputs, posteriors);
      ASSERT_TRUE(got.ok()) << got.status();
      ExpectAsAlignUtterance(options, tm, b, *got, posteriors);
    }
  }
}

TEST(DeviceAlignerTest, ReadiesTheGraphsSendsWhatFitsAndAnswersInTheBatchsOrder) {
  const TransitionModel& tm = KaldiMono();
  const Batch b = MakeBatch(tm, 11, 8);
  for (const bool careful : {false, true}) {
    // A beam as wide as the device's: the CPU's path is the exact one.
    const AlignOptions options{.beam = 1e9f, .careful = careful, .acoustic_scale = 0.5f};
    CpuStandInDevice device(tm);
    DeviceAligner aligner(options, tm, device);
    auto got = aligner.Align(b.inputs, /*posteriors=*/true);
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectAsAlignUtterance(options, tm, b, *got, true);
    // The graph that does not fit the model is never sent; the posteriors only of those aligned.
    EXPECT_EQ(device.aligned(), 10);
    int32_t aligned = 0;
    for (const UtteranceAlignment& a : *got) aligned += a.status.ok() ? 1 : 0;
    EXPECT_EQ(device.posteriors(), aligned);
    EXPECT_GE(aligned, 5);
  }
}

TEST(DeviceAlignerTest, ABatchWithNothingToSendLeavesTheDeviceAlone) {
  const TransitionModel& tm = KaldiMono();
  Batch b = MakeBatch(tm, 3, 9);
  b.inputs = {b.inputs[1]};  // the graph with a label beyond the model
  CpuStandInDevice device(tm);
  DeviceAligner aligner(AlignOptions{}, tm, device);
  auto got = aligner.Align(b.inputs, false);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0].status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(device.aligned(), 0);
}

}  // namespace
}  // namespace gmmscore

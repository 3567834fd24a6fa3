// End to end on real Kaldi data: the model and features Kaldi made, scored by gmmscore, against
// Kaldi's own gmm-compute-likes output (loglikes.ark) and the float64 reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include "formats/model_io.h"
#include "kernels/cpu/cpu_scorer.h"
#include "kernels/cpu/reference_scorer.h"
#include "model/expanded_form.h"
#include "model/random_model.h"
#include "tests/score_fidelity.h"
#include "tests/test_util.h"

namespace gmmscore {
namespace {

using testing::DataPath;
using testing::ReadTable;

constexpr double kVsKaldi = 5e-3;  // Kaldi's float32 is itself ~2e-3 from exact
constexpr double kVsReference = 1e-3;

TEST(KaldiScoring, FastPathMatchesKaldiAndTheReference) {
  for (const char* model_file : {"final.mdl", "final.txt.mdl"}) {
    auto loaded = LoadModel(DataPath(std::string("kaldi-mono/") + model_file));
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    const GmmModel& model = loaded->model;
    const auto feats = ReadTable("ark:" + DataPath("kaldi-mono/feats.ark"));
    const auto kaldi = ReadTable("ark:" + DataPath("kaldi-mono/loglikes.ark"));
    ASSERT_EQ(feats.size(), 6u);
    ASSERT_EQ(kaldi.size(), 6u);
    CpuScorer fast(model, 2);
    double worst_kaldi = 0, worst_ref = 0, worst_ref_kaldi = 0;
    int64_t frames = 0;
    for (const auto& [key, x] : feats) {
      Matrix out;
      ASSERT_TRUE(fast.Score(x, &out).ok());
      const Matrix& expected = kaldi.at(key);
      ASSERT_EQ(out.rows, expected.rows) << key;
      ASSERT_EQ(out.cols, expected.cols) << key;
      const std::vector<double> ref = ReferenceScores(model, x);
      for (size_t i = 0; i < ref.size(); ++i) {
        worst_kaldi = std::max(worst_kaldi, std::abs(double(out.data[i]) - expected.data[i]));
        worst_ref = std::max(worst_ref, std::abs(double(out.data[i]) - ref[i]));
        worst_ref_kaldi = std::max(worst_ref_kaldi, std::abs(ref[i] - expected.data[i]));
      }
      frames += x.rows;
    }
    EXPECT_EQ(frames, 1598);
    EXPECT_LT(worst_kaldi, kVsKaldi) << model_file;
    EXPECT_LT(worst_ref, kVsReference) << model_file;
    RecordProperty(std::string("max_abs_vs_kaldi_") + model_file, std::to_string(worst_kaldi));
    std::printf("%s: max |fast - kaldi| %.2e, |fast - float64| %.2e, |float64 - kaldi| %.2e\n",
                model_file, worst_kaldi, worst_ref, worst_ref_kaldi);
  }
}

// The real model on frames built to be far from its means (model/random_model.h): the guard keeps
// the contract there, and on the real frames it stays out of the way (it recomputes almost none).
TEST(KaldiScoring, FramesFarFromTheMeansKeepTheContract) {
  auto loaded = LoadModel(DataPath("kaldi-mono/final.mdl"));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const GmmModel& model = loaded->model;
  const std::vector<StateGuard> guards = StateGuards(model, MeanOfMeans(model));
  CpuScorer fast(model, 2);
  const Matrix feats = AdversarialFeatures(model, 400, 5);
  const std::vector<double> ref = ReferenceScores(model, feats);
  Matrix out;
  ASSERT_TRUE(fast.Score(feats, &out).ok());
  const testing::ErrorSummary far = testing::Summarize(out, ref, guards);
  EXPECT_LE(far.worst_excess, 1.0) << far.where;

  int64_t guarded = 0, scores = 0;
  for (const auto& [key, x] : ReadTable("ark:" + DataPath("kaldi-mono/feats.ark"))) {
    ASSERT_TRUE(fast.Score(x, &out).ok());
    for (int32_t t = 0; t < out.rows; ++t) {
      for (int32_t s = 0; s < out.cols; ++s) {
        guarded += GuardFires(guards[size_t(s)], out.at(t, s), kCpuGuardGamma);
      }
    }
    scores += int64_t(out.rows) * out.cols;
  }
  std::printf("far frames: worst |fast - float64| %.2e; real frames: %lld of %lld scores guarded\n",
              far.worst_abs, static_cast<long long>(guarded), static_cast<long long>(scores));
  EXPECT_LT(double(guarded), 1e-3 * double(scores));
}

TEST(KaldiScoring, TextAndBinaryFeatureArchivesAgree) {
  const auto bin = ReadTable("ark:" + DataPath("kaldi-mono/feats.ark"));
  const auto text = ReadTable("ark:" + DataPath("kaldi-mono/feats.txt"));
  ASSERT_EQ(bin.size(), text.size());
  for (const auto& [key, m] : bin) {
    const Matrix& t = text.at(key);
    ASSERT_EQ(m.rows, t.rows);
    ASSERT_EQ(m.cols, t.cols);
    for (size_t i = 0; i < m.data.size(); ++i)
      ASSERT_NEAR(m.data[i], t.data[i], 1e-5 * std::abs(m.data[i]) + 1e-5);
  }
}

// The command-line tool, as a user runs it, on the binary and the text model.
TEST(KaldiScoring, CommandLineScoreReproducesKaldi) {
  testing::TempDir dir;
  for (const char* model_file : {"final.mdl", "final.txt.mdl"}) {
    const std::string out = dir.file(std::string(model_file) + ".scores.ark");
    const std::string cmd = std::string(GMMSCORE_CLI) + " score --quiet --model " +
                            DataPath(std::string("kaldi-mono/") + model_file) +
                            " --feats ark:" + DataPath("kaldi-mono/feats.ark") +
                            " --out ark:" + out;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    const auto ours = ReadTable("ark:" + out);
    const auto kaldi = ReadTable("ark:" + DataPath("kaldi-mono/loglikes.ark"));
    ASSERT_EQ(ours.size(), kaldi.size());
    for (const auto& [key, m] : kaldi) {
      const Matrix& o = ours.at(key);
      ASSERT_EQ(o.rows, m.rows);
      for (size_t i = 0; i < m.data.size(); ++i) ASSERT_NEAR(o.data[i], m.data[i], kVsKaldi);
    }
  }
}

}  // namespace
}  // namespace gmmscore

// The CPU fast path against the float64 direct-form reference, and small hand-computed models.
#include "kernels/cpu/cpu_scorer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <numbers>

#include "kernels/cpu/reference_scorer.h"
#include "model/random_model.h"
#include "tests/extreme_case.h"
#include "tests/score_fidelity.h"

namespace gmmscore {
namespace {

constexpr double kTolerance = 1e-3;  // nats: the accuracy contract (README)

double MaxAbsError(const Matrix& fast, const std::vector<double>& ref) {
  double worst = 0.0;
  for (size_t i = 0; i < ref.size(); ++i)
    worst = std::max(worst, std::abs(double(fast.data[i]) - ref[i]));
  return worst;
}

TEST(ReferenceScorer, OneGaussianByHand) {
  GmmModelSpec spec;
  spec.dim = 2;
  spec.gauss_begin = {0, 1};
  spec.weights = {1.0f};
  spec.means = {1.0f, -2.0f};
  spec.variances = {4.0f, 0.25f};
  const GmmModel model = *GmmModel::Create(spec);
  const float x[2] = {2.0f, -1.5f};
  // log N = -log(2 pi) - 1/2 log(4 * 0.25) - 1/2 ((1/4) + (0.25 / 0.25))
  const double expected = -std::log(2 * std::numbers::pi) - 0.5 * (0.25 + 1.0);
  EXPECT_NEAR(ReferenceStateLogLikelihood(model, 0, x), expected, 1e-12);
  EXPECT_NEAR(model.gconst(0), -std::log(2 * std::numbers::pi) - 0.5 * (1.0 / 4 + 4.0 / 0.25),
              1e-12);
}

TEST(ReferenceScorer, TwoGaussianMixtureByHand) {
  GmmModelSpec spec;
  spec.dim = 1;
  spec.gauss_begin = {0, 2};
  spec.weights = {0.25f, 0.75f};
  spec.means = {0.0f, 3.0f};
  spec.variances = {1.0f, 2.0f};
  const GmmModel model = *GmmModel::Create(spec);
  const float x = 1.0f;
  const double n1 = std::exp(-0.5) / std::sqrt(2 * std::numbers::pi);
  const double n2 = std::exp(-4.0 / 4.0) / std::sqrt(2 * std::numbers::pi * 2.0);
  EXPECT_NEAR(ReferenceStateLogLikelihood(model, 0, &x), std::log(0.25 * n1 + 0.75 * n2), 1e-12);
  CpuScorer fast(model, 1);
  Matrix feats(1, 1);
  feats.data = {x};
  Matrix out;
  ASSERT_TRUE(fast.Score(feats, &out).ok());
  EXPECT_NEAR(out.at(0, 0), std::log(0.25 * n1 + 0.75 * n2), 1e-5);
}

struct Case {
  int32_t dim;
  int32_t frames;
  int32_t min_gauss;
  int32_t max_gauss;
  float offset;
};

class CpuScorerVsReference : public ::testing::TestWithParam<Case> {};

TEST_P(CpuScorerVsReference, WithinTolerance) {
  const Case c = GetParam();
  RandomModelOptions o;
  o.dim = c.dim;
  o.num_states = 41;  // tiles of uneven size
  o.min_gauss = c.min_gauss;
  o.max_gauss = c.max_gauss;
  o.mean_offset = c.offset;
  const GmmModel model = RandomModel(o, 1234u + c.dim);
  // Features near the means, as real frames are, so scores sit in the usual range.
  const Matrix feats = RandomFeatures(c.frames, c.dim, c.offset, 2.5f, 99u + c.frames);
  const std::vector<double> ref = ReferenceScores(model, feats);
  for (int threads : {1, 2}) {
    CpuScorer fast(model, threads);
    Matrix out;
    ASSERT_TRUE(fast.Score(feats, &out).ok());
    ASSERT_EQ(out.rows, c.frames);
    ASSERT_EQ(out.cols, model.num_states());
    EXPECT_LT(MaxAbsError(out, ref), kTolerance) << "threads " << threads;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, CpuScorerVsReference,
                         ::testing::Values(Case{1, 1, 1, 1, 0.0f}, Case{1, 65, 1, 9, 5.0f},
                                           Case{13, 1, 1, 24, 0.0f}, Case{13, 63, 1, 24, -20.0f},
                                           Case{36, 129, 1, 40, 0.0f}, Case{39, 7, 1, 60, -15.0f},
                                           Case{39, 200, 16, 16, 0.0f}, Case{40, 131, 1, 300, 3.0f},
                                           Case{39, 64, 1, 1, 0.0f}),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           const Case& c = param_info.param;
                           return "D" + std::to_string(c.dim) + "_F" + std::to_string(c.frames) +
                                  "_G" + std::to_string(c.min_gauss) + "to" +
                                  std::to_string(c.max_gauss);
                         });

TEST(CpuScorer, ExtremeButValidValues) {
  const testing::ExtremeCase c = testing::ExtremeButValidCase();
  CpuScorer fast(c.model, 2);
  Matrix out;
  ASSERT_TRUE(fast.Score(c.feats, &out).ok());
  testing::ExpectNearExtremeReference(out, c.reference, kTolerance);
}

// The case (1.7e-3 nats on real frames far from the mean of the means): states far from
// the shift with tiny variances, frames near and far from them. The plain expanded form breaks the
// contract here; the fast path, with its outlier pass and guard, keeps it.
TEST(CpuScorerFidelity, AdversarialFramesKeepTheContract) {
  for (const int32_t dim : {39, 13, 37}) {
    const testing::AdversarialSet set = testing::MakeAdversarialSet(dim, 60, 259, 500u + dim);
    CpuScorer fast(set.model, 2);
    Matrix out;
    ASSERT_TRUE(fast.Score(set.feats, &out).ok());
    const testing::ErrorSummary guarded = set.Errors(out);
    fast.set_guard_gamma(0.0f);
    ASSERT_TRUE(fast.Score(set.feats, &out).ok());
    const testing::ErrorSummary unguarded = set.Errors(out);
    const testing::ErrorSummary plain =
        set.Errors(testing::PlainExpandedForm(set.model, set.feats));
    std::cout << "D" << dim << ": worst error " << guarded.worst_abs << " nats, "
              << unguarded.worst_abs << " without the guard, " << plain.worst_abs
              << " in the plain expanded form; gamma without the guard " << unguarded.worst_gamma
              << " u\n";
    EXPECT_LE(guarded.worst_excess, 1.0) << "D" << dim << " " << guarded.where;
    EXPECT_GT(plain.worst_excess, 1.0) << "D" << dim << ": the set is not adversarial";
    EXPECT_LE(unguarded.worst_gamma, kCpuGuardGamma * 0x1p24f / 1.4f)
        << "D" << dim << " " << unguarded.gamma_where;
  }
}

// A randomized search for the worst (frame, state): with the guard, nothing beyond the contract;
// without it, no error that needs more than kCpuGuardGamma / 1.4, which is what makes the guard's
// threshold safe.
TEST(CpuScorerFidelity, SearchedWorstFramesStayWithinTheBound) {
  for (const int32_t dim : {39, 20}) {
    const GmmModel model = testing::AdversarialModel(dim, 40, 77u + dim);
    CpuScorer fast(model, 2);
    const testing::ScoreFn score = [&](const Matrix& feats) {
      Matrix out;
      EXPECT_TRUE(fast.Score(feats, &out).ok());
      return out;
    };
    const testing::ErrorSummary guarded =
        testing::SearchWorstFrames(model, score, /*per_gamma=*/false, 64, 40, 11u + dim);
    fast.set_guard_gamma(0.0f);
    const testing::ErrorSummary unguarded =
        testing::SearchWorstFrames(model, score, /*per_gamma=*/true, 64, 40, 12u + dim);
    std::cout << "D" << dim << " searched: worst error " << guarded.worst_abs
              << " nats; gamma without the guard " << unguarded.worst_gamma << " u\n";
    EXPECT_LE(guarded.worst_excess, 1.0) << guarded.where;
    EXPECT_LE(unguarded.worst_gamma, kCpuGuardGamma * 0x1p24f / 1.4f) << unguarded.gamma_where;
  }
}

// The guard's fallback on every score (a gamma of 1 fires everywhere): the direct form from the
// packed parameters, in double, far closer to float64 than the fast path.
TEST(CpuScorerFidelity, DirectFormFallbackMatchesTheReference) {
  for (const int32_t dim : {39, 13}) {
    const GmmModel model = testing::AdversarialModel(dim, 30, 900u + dim);
    const Matrix feats = AdversarialFeatures(model, 70, 901u + dim);
    const std::vector<double> ref = ReferenceScores(model, feats);
    const std::vector<StateGuard> guards = StateGuards(model, MeanOfMeans(model));
    CpuScorer fast(model, 2);
    fast.set_guard_gamma(1.0f);
    Matrix out;
    ASSERT_TRUE(fast.Score(feats, &out).ok());
    const testing::ErrorSummary direct = testing::Summarize(out, ref, guards);
    std::cout << "D" << dim << ": the direct form's worst error " << direct.worst_abs << " nats\n";
    EXPECT_LT(direct.worst_abs, 1e-4) << "D" << dim << " " << direct.where;
    EXPECT_LT(direct.worst_excess, 0.1) << "D" << dim << " " << direct.where;
  }
}

TEST(CpuScorer, RejectsWrongDimensionAndNonFiniteFeatures) {
  const GmmModel model = RandomModel({}, 3);
  CpuScorer fast(model, 1);
  Matrix out;
  const absl::Status wrong_dim = fast.Score(Matrix(4, 12), &out);
  EXPECT_EQ(wrong_dim.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_dim.message().find("dimension 12"), std::string::npos) << wrong_dim;
  Matrix feats(5, 13);
  feats.at(3, 7) = std::nanf("");
  const absl::Status nan = fast.Score(feats, &out);
  EXPECT_NE(nan.message().find("frame 3, dimension 7"), std::string::npos) << nan;
}

TEST(CpuScorer, ZeroFramesGiveEmptyScores) {
  const GmmModel model = RandomModel({}, 4);
  CpuScorer fast(model, 2);
  Matrix out;
  ASSERT_TRUE(fast.Score(Matrix(0, 13), &out).ok());
  EXPECT_EQ(out.rows, 0);
  EXPECT_EQ(out.cols, model.num_states());
}

}  // namespace
}  // namespace gmmscore

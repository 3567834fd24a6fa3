// Score fidelity on every exact CUDA kernel (docs/ARCHITECTURE.md, "Score error model"): the
// issue's adversarial frames, the Kaldi model on frames far from its means and on real frames, a
// randomized search for the worst (frame, state) of each kernel, and the guard kernel's direct-form
// fallback. The worst errors are printed per kernel for the record.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "formats/model_io.h"
#include "kernels/cpu/reference_scorer.h"
#include "kernels/cuda/score/cuda_scorer.h"
#include "model/expanded_form.h"
#include "model/random_model.h"
#include "tests/cuda_test_util.h"
#include "tests/score_fidelity.h"
#include "tests/test_util.h"

namespace gmmscore {
namespace {

struct Kernel {
  const char* name;
  CudaKernelConfig config;
};

const Kernel kKernels[] = {
    {"SIMT", {CudaKernelKind::kSimt, 1, 1}},
    {"SIMT-4-splits", {CudaKernelKind::kSimt, 1, 4}},
    {"3xF16", {CudaKernelKind::kTensor3xF16, 2, 1}},
    {"3xF16-2-splits", {CudaKernelKind::kTensor3xF16, 2, 2}},
    {"3xTF32", {CudaKernelKind::kTensor3xTf32, 4, 1}},
};

class CudaFidelityTest : public testing::WithCudaDevice<::testing::TestWithParam<Kernel>> {
 protected:
  std::unique_ptr<CudaScorer> Scorer(const GmmModel& model, float guard_scale) {
    CudaScorerOptions options;
    options.kernels.fixed = GetParam().config;
    options.kernels.guard_scale = guard_scale;
    options.poison_output = true;
    options.max_frames = kSplitMaxFrames;  // what a fixed split configuration takes a launch
    auto scorer = CudaScorer::Create(model, options);
    EXPECT_TRUE(scorer.ok()) << scorer.status();
    return scorer.ok() ? std::move(*scorer) : nullptr;
  }
  static testing::ScoreFn Fn(const CudaScorer& scorer) {
    return [&scorer](const Matrix& feats) {
      Matrix out;
      const absl::Status status = scorer.Score(feats, &out);
      EXPECT_TRUE(status.ok()) << status;
      return out;
    };
  }
  // The most gamma the measurements may need: the kernel's, over the margin of 1.4 that makes
  // its threshold safe.
  double GammaLimit() const { return GuardGamma(GetParam().config.kind) * 0x1p24 / 1.4; }
};

TEST_P(CudaFidelityTest, AdversarialFramesKeepTheContract) {
  for (const int32_t dim : {39, 13, 37}) {
    const testing::AdversarialSet set = testing::MakeAdversarialSet(dim, 60, 259, 500u + dim);
    auto guarded = Scorer(set.model, 1.0f);
    auto unguarded = Scorer(set.model, 0.0f);
    ASSERT_TRUE(guarded && unguarded);
    const testing::ErrorSummary with = set.Errors(Fn(*guarded)(set.feats));
    const testing::ErrorSummary without = set.Errors(Fn(*unguarded)(set.feats));
    std::printf(
        "%s D%d adversarial: worst error %.3g nats (%.3g without the guard); gamma "
        "without the guard %.2f u\n",
        GetParam().name, dim, with.worst_abs, without.worst_abs, without.worst_gamma);
    EXPECT_LE(with.worst_excess, 1.0) << with.where;
    EXPECT_LE(without.worst_gamma, GammaLimit()) << without.gamma_where;
  }
}

TEST_P(CudaFidelityTest, SearchedWorstFramesStayWithinTheBound) {
  for (const int32_t dim : {39, 20}) {
    const GmmModel model = testing::AdversarialModel(dim, 40, 77u + dim);
    auto guarded = Scorer(model, 1.0f);
    auto unguarded = Scorer(model, 0.0f);
    ASSERT_TRUE(guarded && unguarded);
    const testing::ErrorSummary with =
        testing::SearchWorstFrames(model, Fn(*guarded), /*per_gamma=*/false, 64, 40, 11u + dim);
    const testing::ErrorSummary without =
        testing::SearchWorstFrames(model, Fn(*unguarded), /*per_gamma=*/true, 64, 40, 12u + dim);
    std::printf("%s D%d searched: worst error %.3g nats; gamma without the guard %.2f u\n",
                GetParam().name, dim, with.worst_abs, without.worst_gamma);
    EXPECT_LE(with.worst_excess, 1.0) << with.where;
    EXPECT_LE(without.worst_gamma, GammaLimit()) << without.gamma_where;
  }
}

TEST_P(CudaFidelityTest, KaldiModelOnFarAndRealFrames) {
  auto loaded = LoadModel(testing::DataPath("kaldi-mono/final.mdl"));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const GmmModel& model = loaded->model;
  const std::vector<StateGuard> guards = StateGuards(model, MeanOfMeans(model));
  auto scorer = Scorer(model, 1.0f);
  ASSERT_TRUE(scorer);
  const Matrix far = AdversarialFeatures(model, 400, 5);
  const testing::ErrorSummary far_error =
      testing::Summarize(Fn(*scorer)(far), ReferenceScores(model, far), guards);
  EXPECT_LE(far_error.worst_excess, 1.0) << far_error.where;
  double real_worst = 0.0;
  for (const auto& [key, x] :
       testing::ReadTable("ark:" + testing::DataPath("kaldi-mono/feats.ark"))) {
    const testing::ErrorSummary e =
        testing::Summarize(Fn(*scorer)(x), ReferenceScores(model, x), guards);
    EXPECT_LE(e.worst_excess, 1.0) << key << " " << e.where;
    real_worst = std::max(real_worst, e.worst_abs);
  }
  std::printf("%s Kaldi model: worst error %.3g nats on real frames, %.3g on far frames\n",
              GetParam().name, real_worst, far_error.worst_abs);
  EXPECT_LE(real_worst, 1e-3);
}

// A guard scale of 2^24 fires everywhere: every score comes from the guard kernel's direct form.
TEST_P(CudaFidelityTest, DirectFormFallbackMatchesTheReference) {
  const GmmModel model = testing::AdversarialModel(39, 30, 939);
  const Matrix feats = AdversarialFeatures(model, 70, 940);
  auto scorer = Scorer(model, 0x1p24f);
  ASSERT_TRUE(scorer);
  const testing::ErrorSummary direct = testing::Summarize(
      Fn(*scorer)(feats), ReferenceScores(model, feats), StateGuards(model, MeanOfMeans(model)));
  std::printf("%s direct form: worst error %.3g nats\n", GetParam().name, direct.worst_abs);
  EXPECT_LT(direct.worst_abs, 1e-4) << direct.where;
  EXPECT_LT(direct.worst_excess, 0.1) << direct.where;
}

INSTANTIATE_TEST_SUITE_P(Kernels, CudaFidelityTest, ::testing::ValuesIn(kKernels),
                         [](const ::testing::TestParamInfo<Kernel>& param_info) {
                           std::string name = param_info.param.name;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

}  // namespace
}  // namespace gmmscore

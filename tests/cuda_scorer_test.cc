// The CUDA backend against the float64 direct-form reference. The layout tests run on the host
// and so everywhere; every test that needs a GPU skips, with the reason, where none is present.
#include "kernels/cuda/score/cuda_scorer.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <set>

#include "kernels/cpu/reference_scorer.h"
#include "kernels/cuda/score/cuda_packed_model.h"
#include "model/random_model.h"
#include "tests/cuda_test_util.h"

namespace gmmscore {
namespace {

using testing::kCudaTolerance;
using testing::MaxAbsError;
using testing::PoisonedScores;
using testing::UnevenModel;
using testing::WithCudaDevice;

// Scores frames from the packed layout on the host, in double, with the kernel's indexing: the
// layout's sorting, padding, shift and log2 scaling are checked without a GPU.
std::vector<double> EmulateKernel(const CudaModelLayout& layout, const Matrix& feats) {
  const size_t chunk_floats = size_t(kQuadSlots) * kGroupStates * 4;
  const size_t quad_floats = size_t(layout.chunks) * chunk_floats;
  std::vector<double> scores(size_t(feats.rows) * layout.num_states, 0.0);
  for (int32_t g = 0; g < layout.num_groups; ++g) {
    for (int32_t slot = 0; slot < kGroupStates; ++slot) {
      const int32_t state = layout.slot_state[size_t(g) * kGroupStates + slot];
      if (state < 0) continue;
      for (int32_t t = 0; t < feats.rows; ++t) {
        std::vector<double> terms;
        for (int32_t quad = layout.group_first_quad[g]; quad < layout.group_first_quad[g + 1];
             ++quad) {
          for (int32_t j = 0; j < kQuadGauss; ++j) {
            double a = layout.gconst[(size_t(quad) * kQuadGauss + j) * kGroupStates + slot];
            for (int32_t d = 0; d < layout.dim; ++d) {
              const double x = double(feats.at(t, d)) - layout.shift[d];
              const size_t u_at = size_t(quad) * quad_floats + size_t(d / 4) * chunk_floats +
                                  (size_t(j) * kGroupStates + slot) * 4 + d % 4;
              const size_t v_at = u_at + size_t(kQuadGauss) * kGroupStates * 4;
              a += x * layout.params[u_at] + x * x * layout.params[v_at];
            }
            terms.push_back(a);
          }
        }
        const double m = *std::max_element(terms.begin(), terms.end());
        double sum = 0.0;
        for (double a : terms) sum += std::exp2(a - m);
        scores[size_t(t) * layout.num_states + state] = (m + std::log2(sum)) * std::numbers::ln2;
      }
    }
  }
  return scores;
}

TEST(CudaModelLayout, GroupsAreSortedPaddedAndCoverEveryStateOnce) {
  const GmmModel model = RandomModel(UnevenModel(13), 11);
  const absl::StatusOr<CudaModelLayout> layout = BuildCudaModelLayout(model);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->num_groups, 3);
  EXPECT_EQ(layout->chunks, 4);
  std::set<int32_t> seen;
  int32_t previous_count = std::numeric_limits<int32_t>::max();
  for (int32_t g = 0; g < layout->num_groups; ++g) {
    const int32_t quads = layout->group_first_quad[g + 1] - layout->group_first_quad[g];
    for (int32_t slot = 0; slot < kGroupStates; ++slot) {
      const int32_t state = layout->slot_state[size_t(g) * kGroupStates + slot];
      if (state < 0) {
        EXPECT_EQ(g, layout->num_groups - 1) << "dummy slots only in the last group";
        continue;
      }
      EXPECT_TRUE(seen.insert(state).second) << "state " << state << " twice";
      EXPECT_LE(model.num_gauss_in(state), previous_count) << "not sorted by count";
      EXPECT_LE(model.num_gauss_in(state), kQuadGauss * quads) << "group " << g << " too small";
      previous_count = model.num_gauss_in(state);
    }
  }
  EXPECT_EQ(seen.size(), size_t(model.num_states()));
}

TEST(CudaModelLayout, HostEmulationMatchesReference) {
  for (int32_t dim : {1, 13, 39}) {
    RandomModelOptions o = UnevenModel(dim);
    o.max_gauss = 40;
    o.mean_offset = -20.0f;  // the shift must take this out
    const GmmModel model = RandomModel(o, 21u + dim);
    const Matrix feats = RandomFeatures(5, dim, -20.0f, 2.5f, 22u + dim);
    const absl::StatusOr<CudaModelLayout> layout = BuildCudaModelLayout(model);
    ASSERT_TRUE(layout.ok()) << layout.status();
    const std::vector<double> emulated = EmulateKernel(*layout, feats);
    const std::vector<double> ref = ReferenceScores(model, feats);
    double worst = 0.0;
    for (size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::abs(emulated[i] - ref[i]));
    EXPECT_LT(worst, 1e-4) << "dim " << dim;
  }
}

using CudaScorerTest = WithCudaDevice<::testing::Test>;

class CudaScorerVsReference : public WithCudaDevice<::testing::TestWithParam<int32_t>> {};

TEST_P(CudaScorerVsReference, EveryScoreWrittenAndWithinTolerance) {
  const int32_t dim = GetParam();
  RandomModelOptions o = UnevenModel(dim);
  o.mean_offset = dim == 13 ? -20.0f : 3.0f;
  const GmmModel model = RandomModel(o, 1234u + dim);
  // One block a group, and splits that leave some blocks few or no quads of a group (the model's
  // groups have 1 to 75 quads).
  for (const int32_t splits : {1, 3, kMaxSplits}) {
    CudaScorerOptions options;
    options.poison_output = true;
    options.kernels.fixed = CudaKernelConfig{CudaKernelKind::kSimt, 1, splits};
    // Split launches take at most kSplitMaxFrames frames: longer inputs take several.
    options.max_frames = splits > 1 ? kSplitMaxFrames : 1024;
    absl::StatusOr<std::unique_ptr<CudaScorer>> scorer = CudaScorer::Create(model, options);
    ASSERT_TRUE(scorer.ok()) << scorer.status();
    // 1 and 7 frames leave a block's second slice idle; 1000 ends in a partial block.
    for (int32_t frames : {1, 7, 64, 1000}) {
      const Matrix feats = RandomFeatures(frames, dim, o.mean_offset, 2.5f, 99u + frames);
      Matrix out = PoisonedScores(frames, model.num_states());
      ASSERT_TRUE((*scorer)->Score(feats, &out).ok());
      ASSERT_EQ(out.rows, frames);
      ASSERT_EQ(out.cols, model.num_states());
      EXPECT_LE(MaxAbsError(out, ReferenceScores(model, feats)), kCudaTolerance)
          << frames << " frames, " << splits << " splits";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dims, CudaScorerVsReference, ::testing::Values(1, 13, 36, 39, 40),
                         [](const ::testing::TestParamInfo<int32_t>& param_info) {
                           return "D" + std::to_string(param_info.param);
                         });

TEST_F(CudaScorerTest, LongInputsInSeveralLaunchesGiveTheSameScores) {
  // One fixed configuration: the autotune may choose splits for the shorter launches, which log-add
  // in another order.
  CudaScorerOptions options;
  options.kernels.fixed = CudaKernelConfig{};
  testing::ExpectChunkedLaunchesEqualOneLaunch(options);
}

TEST_F(CudaScorerTest, ExtremeButValidValues) {
  CudaScorerOptions options;
  options.kernels.mode = CudaKernelMode::kSimt;
  testing::ExpectExtremeCaseWithinTolerance(options);
}

TEST_F(CudaScorerTest, ModelOverTheMemoryBudgetIsRefusedClearly) {
  RandomModelOptions o;
  o.num_states = 500;
  o.dim = 39;
  o.min_gauss = o.max_gauss = 16;
  const GmmModel model = RandomModel(o, 9);
  CudaScorerOptions options;
  options.memory_budget_bytes = 1 << 20;
  const auto scorer = CudaScorer::Create(model, options);
  ASSERT_FALSE(scorer.ok());
  EXPECT_EQ(scorer.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(scorer.status().message().find("bytes of device memory"), std::string::npos)
      << scorer.status();
  EXPECT_NE(scorer.status().message().find("memory budget is 1048576 bytes"), std::string::npos)
      << scorer.status();
}

TEST_F(CudaScorerTest, BuffersLargerThanTheDeviceAreRefusedBeforeAllocating) {
  // 2^30 frames of 5000 states need about 21 TB: more than any device has free.
  RandomModelOptions o;
  o.num_states = 5000;
  o.min_gauss = o.max_gauss = 1;
  const GmmModel model = RandomModel(o, 10);
  CudaScorerOptions options;
  options.max_frames = 1 << 30;
  const auto scorer = CudaScorer::Create(model, options);
  ASSERT_FALSE(scorer.ok());
  EXPECT_EQ(scorer.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(scorer.status().message().find("bytes free of"), std::string::npos) << scorer.status();
}

TEST_F(CudaScorerTest, RejectsBadFeaturesAndOversizedLaunches) {
  const GmmModel model = RandomModel({}, 3);
  CudaScorerOptions options;
  options.max_frames = 16;
  auto scorer = CudaScorer::Create(model, options);
  ASSERT_TRUE(scorer.ok()) << scorer.status();
  Matrix out;
  const absl::Status wrong_dim = (*scorer)->Score(Matrix(4, 12), &out);
  EXPECT_EQ(wrong_dim.code(), absl::StatusCode::kInvalidArgument);
  Matrix feats(5, 13);
  feats.at(3, 7) = std::nanf("");
  EXPECT_NE((*scorer)->Score(feats, &out).message().find("frame 3, dimension 7"),
            std::string::npos);
  // A batch longer than the workspace holds is refused before anything is enqueued.
  auto workspace = CudaWorkspace::Create(0);
  ASSERT_TRUE(workspace.ok()) << workspace.status();
  ASSERT_TRUE((*workspace)->Reserve({16, 13, model.num_states(), 1, 0}).ok());
  const CudaResidentModel* models[] = {&(*scorer)->resident()};
  const CudaKernelConfig simt;
  const FusionSegment whole{17, nullptr};
  EXPECT_EQ((*workspace)->Enqueue(models, {&simt, 1}, {&whole, 1}, 17, false).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(CudaScorerTest, ZeroFramesGiveEmptyScores) {
  const GmmModel model = RandomModel({}, 4);
  auto scorer = CudaScorer::Create(model);
  ASSERT_TRUE(scorer.ok()) << scorer.status();
  Matrix out;
  ASSERT_TRUE((*scorer)->Score(Matrix(0, 13), &out).ok());
  EXPECT_EQ(out.rows, 0);
  EXPECT_EQ(out.cols, model.num_states());
  EXPECT_EQ((*scorer)->name(), "cuda-auto");
}

TEST(CudaScorerWithoutDevice, MissingDeviceIsUnavailable) {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) {
    CudaScorerOptions options;
    options.device = count;  // one past the last
    const auto scorer = CudaScorer::Create(RandomModel({}, 5), options);
    EXPECT_EQ(scorer.status().code(), absl::StatusCode::kUnavailable) << scorer.status();
  } else {
    const auto scorer = CudaScorer::Create(RandomModel({}, 5));
    EXPECT_EQ(scorer.status().code(), absl::StatusCode::kUnavailable) << scorer.status();
  }
}

}  // namespace
}  // namespace gmmscore

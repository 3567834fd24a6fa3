// The CUDA backend's tensor-core path against the float64 direct-form reference, and the autotune
// that chooses between it and the SIMT kernel. The layout tests run on the host and so
// everywhere; every test that needs a GPU skips, with the reason, where none is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <iostream>
#include <limits>
#include <numbers>
#include <set>
#include <tuple>

#include "kernels/cpu/reference_scorer.h"
#include "kernels/cuda/score/cuda_scorer.h"
#include "kernels/cuda/score/tensor_kernel.h"
#include "kernels/cuda/score/tensor_model_layout.h"
#include "model/random_model.h"
#include "tests/cuda_test_util.h"

namespace gmmscore {
namespace {

using testing::kCudaTolerance;
using testing::MaxAbsError;
using testing::PoisonedScores;
using testing::UnevenModel;
using testing::WithCudaDevice;

CudaKernelConfig Tensor3x(int32_t frame_tiles, int32_t splits) {
  return {CudaKernelKind::kTensor3xTf32, frame_tiles, splits};
}

// A state's score in nats from its Gaussians' sums in log2 units.
double LogSumNats(const std::vector<double>& terms) {
  const double m = *std::max_element(terms.begin(), terms.end());
  double sum = 0.0;
  for (double t : terms) sum += std::exp2(t - m);
  return (m + std::log2(sum)) * std::numbers::ln2;
}

CudaKernelConfig F16x3(int32_t frame_tiles, int32_t splits) {
  return {CudaKernelKind::kTensor3xF16, frame_tiles, splits};
}

float HalfToFloat(uint32_t bits) {
  return static_cast<float>(std::bit_cast<_Float16>(static_cast<uint16_t>(bits & 0xffffu)));
}

// Scores frames from the 3xF16 rows on the host, in double, reading every parameter where the
// kernel's lanes read it (PTX ISA m16n8k16 fragments: lane 4 s + t holds B[2t, 2t + 1][s] in its
// first register and B[2t + 8, 2t + 9][s] in its second): each parameter as high + low / 2^11,
// times the column's 2^-s, which the kernel applies to the frames instead.
std::vector<double> EmulateTensorF16Kernel(const TensorModelLayout& layout, const Matrix& feats) {
  const size_t row_words = size_t(TensorF16RowWords(layout.chunks)) * 4;
  const size_t gconst_at = row_words - kTensorGroupStates;
  std::vector<double> scores(size_t(feats.rows) * layout.num_states, 0.0);
  for (int32_t g = 0; g < layout.num_groups; ++g) {
    for (int32_t slot = 0; slot < kTensorGroupStates; ++slot) {
      const int32_t state = layout.slot_state[size_t(g) * kTensorGroupStates + slot];
      if (state < 0) continue;
      const int32_t n = slot / 8;
      for (int32_t f = 0; f < feats.rows; ++f) {
        std::vector<double> terms;
        for (int32_t row = layout.group_first_row[g]; row < layout.group_first_row[g + 1]; ++row) {
          const uint32_t* words = layout.rows_f16.data() + size_t(row) * row_words;
          double a = std::bit_cast<float>(words[gconst_at + slot]);
          for (int32_t c = 0; c < layout.chunks; ++c) {
            for (int32_t k = 0; k < 8; k += 2) {  // a lane's pair (x' u, x'^2 v) of dimension d
              const int32_t lane = 4 * (slot % 8) + k / 2;
              const uint32_t* word = words + 4 * (size_t(2 * (c / 2) + n) * kTensorLanes + lane);
              const uint32_t hi = word[c % 2];
              const uint32_t lo = word[2 + c % 2];
              const int32_t d = 4 * c + k / 2;
              if (d >= layout.dim) {
                EXPECT_EQ(hi | lo, 0u) << "padding dimension " << d;
                continue;
              }
              const double x = double(feats.at(f, d)) - layout.shift[d];
              const double u =
                  (double(HalfToFloat(hi)) + HalfToFloat(lo) / 2048.0) * layout.column_scale[d];
              const double v = (double(HalfToFloat(hi >> 16)) + HalfToFloat(lo >> 16) / 2048.0) *
                               layout.column_scale[layout.dim + d];
              a += x * u + x * x * v;
            }
          }
          terms.push_back(a);
        }
        scores[size_t(f) * layout.num_states + state] = LogSumNats(terms);
      }
    }
  }
  return scores;
}

// Scores frames from the tensor layout on the host, in double, reading every operand where the
// kernel's lanes read it (PTX ISA m16n8k8 fragments: lane 4 s + t holds B[t][s] and B[t + 4][s],
// accumulator columns 2t and 2t + 1): the layout's sorting, padding and lane order are checked
// without a GPU.
std::vector<double> EmulateTensorKernel(const TensorModelLayout& layout, const Matrix& feats) {
  const size_t row_floats = size_t(TensorRowWords(layout.chunks)) * 4;
  std::vector<double> scores(size_t(feats.rows) * layout.num_states, 0.0);
  for (int32_t g = 0; g < layout.num_groups; ++g) {
    for (int32_t n = 0; n < 2; ++n) {          // the group's two 8-state tiles
      for (int32_t col = 0; col < 8; ++col) {  // accumulator column: slot 8n + col
        const int32_t slot = 8 * n + col;
        const int32_t state = layout.slot_state[size_t(g) * kTensorGroupStates + slot];
        if (state < 0) continue;
        for (int32_t f = 0; f < feats.rows; ++f) {
          std::vector<double> terms;
          for (int32_t row = layout.group_first_row[g]; row < layout.group_first_row[g + 1];
               ++row) {
            const float* hi = layout.rows.data() + size_t(row) * row_floats;
            const float* lo = hi + size_t(layout.chunks) * kTensorLanes * 4;
            double a = lo[size_t(layout.chunks) * kTensorLanes * 4 + slot];
            for (int32_t c = 0; c < layout.chunks; ++c) {
              for (int32_t k = 0; k < 8; ++k) {
                // B[k][col] is held by lane 4 col + k % 4, as b0 (u, k < 4) or b1 (v, k >= 4).
                const int32_t lane = 4 * col + k % 4;
                const size_t at = ((size_t(c) * 2 + n) * kTensorLanes + lane) * 2 + k / 4;
                EXPECT_EQ(std::bit_cast<uint32_t>(hi[at]) & 0x1fffu, 0u) << "not a TF32 value";
                const double b = double(hi[at]) + double(lo[at]);
                const int32_t d = 4 * c + k % 4;
                const double x = d < layout.dim ? double(feats.at(f, d)) - layout.shift[d] : 0.0;
                a += (k < 4 ? x : x * x) * b;
              }
            }
            terms.push_back(a);
          }
          scores[size_t(f) * layout.num_states + state] = LogSumNats(terms);
        }
      }
    }
  }
  return scores;
}

TEST(TensorModelLayout, GroupsAreSortedPaddedAndCoverEveryStateOnce) {
  const GmmModel model = RandomModel(UnevenModel(13), 11);
  const absl::StatusOr<TensorModelLayout> layout =
      BuildTensorModelLayout(model, std::vector<float>(13, 0.0f));
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->num_groups, 10);
  EXPECT_EQ(layout->chunks, 4);
  std::set<int32_t> seen;
  int32_t previous_count = std::numeric_limits<int32_t>::max();
  for (int32_t g = 0; g < layout->num_groups; ++g) {
    const int32_t rows = layout->group_first_row[g + 1] - layout->group_first_row[g];
    for (int32_t slot = 0; slot < kTensorGroupStates; ++slot) {
      const int32_t state = layout->slot_state[size_t(g) * kTensorGroupStates + slot];
      if (state < 0) {
        EXPECT_EQ(g, layout->num_groups - 1) << "dummy slots only in the last group";
        continue;
      }
      EXPECT_TRUE(seen.insert(state).second) << "state " << state << " twice";
      EXPECT_LE(model.num_gauss_in(state), previous_count) << "not sorted by count";
      EXPECT_LE(model.num_gauss_in(state), rows) << "group " << g << " too small";
      if (slot == 0) {
        EXPECT_EQ(model.num_gauss_in(state), rows) << "group " << g << " padded too far";
      }
      previous_count = model.num_gauss_in(state);
    }
  }
  EXPECT_EQ(seen.size(), size_t(model.num_states()));
}

TEST(TensorModelLayout, HostEmulationOfTheFragmentsMatchesReference) {
  for (int32_t dim : {1, 13, 39}) {
    RandomModelOptions o = UnevenModel(dim);
    o.max_gauss = 40;
    o.mean_offset = -20.0f;  // the shift must take this out
    const GmmModel model = RandomModel(o, 31u + dim);
    const Matrix feats = RandomFeatures(5, dim, -20.0f, 2.5f, 32u + dim);
    std::vector<float> shift(dim, -20.0f);
    const absl::StatusOr<TensorModelLayout> layout = BuildTensorModelLayout(model, shift);
    ASSERT_TRUE(layout.ok()) << layout.status();
    const std::vector<double> emulated = EmulateTensorKernel(*layout, feats);
    const std::vector<double> ref = ReferenceScores(model, feats);
    double worst = 0.0;
    for (size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::abs(emulated[i] - ref[i]));
    EXPECT_LT(worst, 1e-4) << "dim " << dim;
  }
}

TEST(TensorModelLayout, HostEmulationOfTheF16FragmentsMatchesReference) {
  for (int32_t dim : {1, 13, 39}) {
    RandomModelOptions o = UnevenModel(dim);
    o.max_gauss = 40;
    o.min_var = 1e-3f;  // columns of very different scales
    o.max_var = 1e3f;
    o.mean_offset = -20.0f;
    const GmmModel model = RandomModel(o, 41u + dim);
    const Matrix feats = RandomFeatures(5, dim, -20.0f, 2.5f, 42u + dim);
    const absl::StatusOr<TensorModelLayout> layout =
        BuildTensorModelLayout(model, std::vector<float>(dim, -20.0f), {.tf32 = false});
    ASSERT_TRUE(layout.ok()) << layout.status();
    EXPECT_TRUE(layout->rows.empty()) << "3xTF32 rows not asked for";
    for (const float scale : layout->column_scale) {
      EXPECT_EQ(std::bit_cast<uint32_t>(scale) & 0x7fffffu, 0u) << scale << " not a power of two";
    }
    const std::vector<double> emulated = EmulateTensorF16Kernel(*layout, feats);
    const std::vector<double> ref = ReferenceScores(model, feats);
    double worst = 0.0;
    for (size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::abs(emulated[i] - ref[i]));
    // Relative to the scores' size: these reach -1e4 with variances down to 1e-3.
    double largest = 1.0;
    for (double r : ref) largest = std::max(largest, std::abs(r));
    EXPECT_LT(worst, 1e-4 + 2e-6 * largest) << "dim " << dim;
  }
}

TEST(TensorModelLayout, RefusesDimensionsPastTheKernelsOperands) {
  RandomModelOptions o;
  o.dim = 4 * kTensorMaxChunks + 1;
  const GmmModel model = RandomModel(o, 12);
  EXPECT_FALSE(TensorKernelSupports(model.dim(), model.num_states()));
  const auto layout = BuildTensorModelLayout(model, std::vector<float>(o.dim, 0.0f));
  EXPECT_EQ(layout.status().code(), absl::StatusCode::kInvalidArgument) << layout.status();
}

using CudaTensorTest = WithCudaDevice<::testing::Test>;

class TensorScorerVsReference
    : public WithCudaDevice<::testing::TestWithParam<std::tuple<CudaKernelKind, int32_t>>> {};

// Every blocking the autotune may pick, and frame counts that leave warps, blocks and the last
// tile partly empty; the output is poisoned before every launch.
TEST_P(TensorScorerVsReference, EveryScoreWrittenAndWithinTolerance) {
  const auto [kind, dim] = GetParam();
  const auto blocking = [kind](int32_t frame_tiles, int32_t splits) {
    return CudaKernelConfig{kind, frame_tiles, splits};
  };
  RandomModelOptions o = UnevenModel(dim);
  o.mean_offset = dim == 13 ? -20.0f : 3.0f;
  const GmmModel model = RandomModel(o, 4321u + dim);
  std::vector<std::unique_ptr<CudaScorer>> scorers;
  for (const CudaKernelConfig& config :
       {blocking(1, 1), blocking(2, 3), blocking(4, 8), blocking(kTensorMaxFrameTiles, 1),
        blocking(kTensorMaxFrameTiles, 2)}) {
    CudaScorerOptions options;
    options.poison_output = true;
    options.kernels.fixed = config;
    // Split launches take at most kSplitMaxFrames frames: longer inputs take several.
    options.max_frames = config.splits > 1 ? kSplitMaxFrames : 1024;
    auto scorer = CudaScorer::Create(model, options);
    ASSERT_TRUE(scorer.ok()) << scorer.status();
    scorers.push_back(*std::move(scorer));
  }
  double worst = 0.0;
  for (int32_t frames : {1, 7, 17, 256, 1000, 1024}) {
    const Matrix feats = RandomFeatures(frames, dim, o.mean_offset, 2.5f, 77u + frames);
    const std::vector<double> ref = ReferenceScores(model, feats);
    for (const auto& scorer : scorers) {
      Matrix out = PoisonedScores(frames, model.num_states());
      ASSERT_TRUE(scorer->Score(feats, &out).ok());
      ASSERT_EQ(out.rows, frames);
      ASSERT_EQ(out.cols, model.num_states());
      const double error = MaxAbsError(out, ref);
      EXPECT_LE(error, kCudaTolerance) << scorer->name() << ", " << frames << " frames";
      worst = std::max(worst, error);
    }
  }
  std::cout << KindName(kind) << ", dimension " << dim << ": max abs error " << worst << " nats\n";
}

INSTANTIATE_TEST_SUITE_P(
    KindsAndDims, TensorScorerVsReference,
    ::testing::Combine(::testing::Values(CudaKernelKind::kTensor3xF16,
                                         CudaKernelKind::kTensor3xTf32),
                       ::testing::Values(1, 13, 36, 39, 40)),
    [](const ::testing::TestParamInfo<std::tuple<CudaKernelKind, int32_t>>& param_info) {
      const bool f16 = std::get<0>(param_info.param) == CudaKernelKind::kTensor3xF16;
      return std::string(f16 ? "F16" : "TF32") + "_D" +
             std::to_string(std::get<1>(param_info.param));
    });

// Runs check(options) for a fixed blocking of each float32-accurate tensor kind.
template <typename Check>
void ForEachExactTensorKind(Check&& check) {
  for (const CudaKernelConfig& config : {Tensor3x(2, 1), F16x3(2, 1)}) {
    SCOPED_TRACE(ToString(config));
    CudaScorerOptions options;
    options.kernels.fixed = config;
    check(options);
  }
}

TEST_F(CudaTensorTest, LongInputsInSeveralLaunchesGiveTheSameScores) {
  ForEachExactTensorKind(testing::ExpectChunkedLaunchesEqualOneLaunch);
}

TEST_F(CudaTensorTest, ExtremeButValidValues) {
  ForEachExactTensorKind(testing::ExpectExtremeCaseWithinTolerance);
}

// Frames far outside half precision's range (x'^2 up to 1e12) beside ordinary ones in the same
// warp: the 3xF16 kernel's per-frame scaling keeps them finite and float32-accurate.
TEST_F(CudaTensorTest, F16KernelScalesFarFramesIntoRange) {
  const GmmModel model = RandomModel(UnevenModel(36), 23);
  Matrix feats = RandomFeatures(40, 36, 0.0f, 2.5f, 24);
  for (int32_t d = 0; d < 36; d += 5) feats.at(3, d) = 1e6f;
  for (int32_t d = 0; d < 36; ++d) feats.at(17, d) = -3e3f;
  feats.at(30, 7) = 1e-30f;
  const std::vector<double> ref = ReferenceScores(model, feats);
  CudaScorerOptions options;
  options.kernels.fixed = F16x3(2, 1);
  options.poison_output = true;
  auto scorer = CudaScorer::Create(model, options);
  ASSERT_TRUE(scorer.ok()) << scorer.status();
  Matrix out = PoisonedScores(40, model.num_states());
  ASSERT_TRUE((*scorer)->Score(feats, &out).ok());
  testing::ExpectNearExtremeReference(out, ref, kCudaTolerance);
}

TEST_F(CudaTensorTest, ScorersKeepOnlyTheRowsTheirKindsRead) {
  const GmmModel model = RandomModel(UnevenModel(13), 25);
  auto automatic = CudaScorer::Create(model);
  ASSERT_TRUE(automatic.ok()) << automatic.status();
  EXPECT_TRUE((*automatic)->resident().HasKind(CudaKernelKind::kTensor3xF16));
  EXPECT_FALSE((*automatic)->resident().HasKind(CudaKernelKind::kTensor3xTf32));
  const Matrix feats = RandomFeatures(20, 13, 0.0f, 2.5f, 26);
  // Refused before anything is launched: no pointer is read.
  EXPECT_EQ((*automatic)
                ->resident()
                .Launch(Tensor3x(1, 1), nullptr, 20, nullptr, nullptr, nullptr)
                .code(),
            absl::StatusCode::kFailedPrecondition);
  auto workspace = CudaWorkspace::Create(0);
  ASSERT_TRUE(workspace.ok()) << workspace.status();
  KernelChooser chooser(CudaKernelChoice(), 64);
  EXPECT_EQ(chooser.Tune((*automatic)->resident(), 20, CudaKernelMode::kTensorTf32, **workspace)
                .status()
                .code(),
            absl::StatusCode::kFailedPrecondition);
  CudaScorerOptions every;
  every.kernels.all_tensor_kinds = true;
  auto all = CudaScorer::Create(model, every);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_TRUE((*all)->resident().HasKind(CudaKernelKind::kTensor3xTf32));
  EXPECT_TRUE((*all)->resident().HasKind(CudaKernelKind::kTensor1xTf32));
  EXPECT_GT((*all)->resident().bytes(), (*automatic)->resident().bytes());
}

// The 1xTF32 kernel is an explicit option for its speed: its error is measured, printed and only
// bounded loosely here.
TEST_F(CudaTensorTest, FastModeErrorIsMeasured) {
  RandomModelOptions o = UnevenModel(39);
  const GmmModel model = RandomModel(o, 13);
  const Matrix feats = RandomFeatures(256, 39, 0.0f, 2.5f, 14);
  CudaScorerOptions options;
  options.kernels.mode = CudaKernelMode::kTensorFast;
  options.poison_output = true;
  auto scorer = CudaScorer::Create(model, options);
  ASSERT_TRUE(scorer.ok()) << scorer.status();
  Matrix out = PoisonedScores(256, model.num_states());
  ASSERT_TRUE((*scorer)->Score(feats, &out).ok());
  const double error = MaxAbsError(out, ReferenceScores(model, feats));
  std::cout << "1xTF32 max abs error, 150 states x 1-300 Gaussians x 39 dims, 256 frames: " << error
            << " nats (" << ToString(*(*scorer)->ChosenConfig(256)) << ")\n";
  RecordProperty("fast_mode_max_abs_error", std::to_string(error));
  EXPECT_LT(error, 2.0);
}

TEST_F(CudaTensorTest, AutotuneChoosesPerShapeBucketAndRemembers) {
  RandomModelOptions o;
  o.num_states = 700;
  o.dim = 36;
  o.min_gauss = o.max_gauss = 64;
  const GmmModel model = RandomModel(o, 15);
  CudaScorerOptions options;
  options.max_frames = 512;
  auto scorer = CudaScorer::Create(model, options);
  ASSERT_TRUE(scorer.ok()) << scorer.status();
  ASSERT_TRUE((*scorer)->resident().HasKind(CudaKernelKind::kTensor3xF16));
  EXPECT_EQ((*scorer)->ChosenConfig(256), std::nullopt);
  for (int32_t frames : {8, 256}) {
    const Matrix feats = RandomFeatures(frames, 36, 0.0f, 2.5f, 16u + frames);
    Matrix out;
    ASSERT_TRUE((*scorer)->Score(feats, &out).ok());
    const std::optional<CudaKernelConfig> chosen = (*scorer)->ChosenConfig(frames);
    ASSERT_TRUE(chosen.has_value()) << frames << " frames";
    std::cout << frames << " frames: " << ToString(*chosen) << "\n";
    EXPECT_LE(MaxAbsError(out, ReferenceScores(model, feats)), kCudaTolerance);
    // The same bucket keeps its choice, without tuning again.
    const absl::StatusOr<CudaKernelConfig> again = (*scorer)->ConfigFor(frames / 2 + 1);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(*again, *chosen);
  }
  EXPECT_EQ((*scorer)->ChosenConfig(512), std::nullopt) << "a bucket not used yet";
}

TEST_F(CudaTensorTest, SimtAndTensorPathsAgree) {
  const GmmModel model = RandomModel(UnevenModel(36), 17);
  const Matrix feats = RandomFeatures(300, 36, 0.0f, 2.5f, 18);
  const auto score = [&](const CudaKernelConfig& config, Matrix* out) {
    CudaScorerOptions options;
    options.kernels.fixed = config;
    auto scorer = CudaScorer::Create(model, options);
    ASSERT_TRUE(scorer.ok()) << scorer.status();
    ASSERT_TRUE((*scorer)->Score(feats, out).ok());
  };
  Matrix simt;
  Matrix tensor;
  score(CudaKernelConfig{}, &simt);
  score(F16x3(4, 1), &tensor);
  ASSERT_EQ(simt.data.size(), tensor.data.size());
  double worst = 0.0;
  for (size_t i = 0; i < simt.data.size(); ++i) {
    worst = std::max(worst, std::abs(double(simt.data[i]) - double(tensor.data[i])));
  }
  EXPECT_LE(worst, kCudaTolerance);
}

TEST(CudaTensorConfig, RefusesBlockingsTheKernelDoesNotHave) {
  // Refused before any device is looked for, so also without one.
  for (const CudaKernelConfig& config :
       {Tensor3x(kTensorMaxFrameTiles + 1, 1), Tensor3x(0, 1), Tensor3x(1, kMaxSplits + 1)}) {
    CudaScorerOptions options;
    options.kernels.fixed = config;
    const auto scorer = CudaScorer::Create(RandomModel({}, 21), options);
    EXPECT_EQ(scorer.status().code(), absl::StatusCode::kInvalidArgument) << scorer.status();
  }
}

TEST_F(CudaTensorTest, TensorModesRefuseWhatTheKernelCannotTakeAndAutoFallsBack) {
  RandomModelOptions o;
  o.dim = 4 * kTensorMaxChunks + 1;
  const GmmModel model = RandomModel(o, 19);
  CudaScorerOptions tensor;
  tensor.kernels.mode = CudaKernelMode::kTensor;
  EXPECT_EQ(CudaScorer::Create(model, tensor).status().code(), absl::StatusCode::kInvalidArgument);
  auto automatic = CudaScorer::Create(model);
  ASSERT_TRUE(automatic.ok()) << automatic.status();
  EXPECT_FALSE((*automatic)->resident().HasKind(CudaKernelKind::kTensor3xF16));
  const Matrix feats = RandomFeatures(20, o.dim, 0.0f, 2.5f, 20);
  Matrix out = PoisonedScores(20, model.num_states());
  ASSERT_TRUE((*automatic)->Score(feats, &out).ok());
  EXPECT_LE(MaxAbsError(out, ReferenceScores(model, feats)), kCudaTolerance);
  EXPECT_EQ((*automatic)->ChosenConfig(20)->kind, CudaKernelKind::kSimt);
}

}  // namespace
}  // namespace gmmscore

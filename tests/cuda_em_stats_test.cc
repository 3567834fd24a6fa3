// The GPU E-step (kernels/cuda/cuda_gmm_statistics: the tensor-core kernels of em_tensor_kernel
// for the Gaussians they keep accurate, em_stats_kernel for the rest, and the exact kernels alone)
// against the CPU's float64 statistics (train/accumulate): one EM iteration's re-estimated
// weights, means and variances within 1e-4 relative, on single GMMs with Gaussian counts that are
// not a multiple of the tile, dimensions 13, 39, 40 and 128, one frame, frames far from the means,
// variances five decades apart, frames 10^4 outside the model among ordinary ones, tiny variances
// far from the origin (where float32 sums of x^2 would cancel), and clusters of
// Gaussians far apart (some to each path); streamed in chunks equals resident; sums accumulate
// across calls and devices' worth of AddTo.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_gmm_statistics.h"
#include "kernels/cuda/em_tensor_kernel.h"  // kEmTensorBlockGauss
#include "model/random_model.h"
#include "tests/cuda_test_util.h"
#include "train/accumulate.h"
#include "train/mle_update.h"

namespace gmmscore {
namespace {

using CudaEmStatsTest = testing::WithCudaDevice<::testing::Test>;

// Frames drawn from the GMM of pdf, `sigmas` times its spread.
Matrix Sample(const GmmModel& model, int32_t pdf, int32_t frames, double sigmas, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<uint32_t> pick(model.gauss_begin(pdf), model.gauss_end(pdf) - 1);
  Matrix x(frames, model.dim());
  for (int32_t t = 0; t < frames; ++t) {
    const uint32_t g = pick(rng);
    for (int32_t d = 0; d < model.dim(); ++d) {
      x.at(t, d) = static_cast<float>(model.mean(g)[d] +
                                      sigmas * std::sqrt(model.variance(g)[d]) * normal(rng));
    }
  }
  return x;
}

MleOptions KeepAll() {
  MleOptions options;
  options.min_gaussian_occupancy = 0.0;
  options.min_gaussian_weight = 0.0;
  options.min_variance = 1e-30;
  options.remove_low_count_gaussians = false;
  return options;
}

void ExpectSameUpdate(const GmmModel& model, const GmmStats& gpu, const GmmStats& cpu) {
  EXPECT_NEAR(gpu.total_frames, cpu.total_frames, 0.0);
  EXPECT_NEAR(gpu.total_log_like, cpu.total_log_like, 1e-5 * std::abs(cpu.total_log_like) + 1e-3);
  auto a = MleUpdate(KeepAll(), gpu, kGmmAll, model, nullptr);
  auto b = MleUpdate(KeepAll(), cpu, kGmmAll, model, nullptr);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  int checked = 0;
  for (int64_t g = 0; g < model.num_gauss(); ++g) {
    // A Gaussian with a few hundredths of a frame has no meaningful variance to compare.
    if (cpu.occupancy[size_t(g)] < 0.5) continue;
    ++checked;
    EXPECT_NEAR(gpu.occupancy[size_t(g)], cpu.occupancy[size_t(g)],
                1e-4 * cpu.occupancy[size_t(g)] + 1e-6)
        << "Gaussian " << g;
    EXPECT_NEAR(a->weight(g), b->weight(g), 1e-4 * b->weight(g)) << "Gaussian " << g;
    for (int32_t d = 0; d < model.dim(); ++d) {
      const double var = b->variance(g)[d], mean = b->mean(g)[d];
      EXPECT_NEAR(a->mean(g)[d], mean, 1e-4 * std::max(std::abs(mean), std::sqrt(var)))
          << "Gaussian " << g << " dimension " << d;
      EXPECT_NEAR(a->variance(g)[d], var, 1e-4 * var) << "Gaussian " << g << " dimension " << d;
    }
  }
  EXPECT_GT(checked, 0);
}

struct Case {
  const char* name;
  int32_t gauss, dim, frames;
  double sigmas;
  float mean_offset, min_var, max_var;
  float mean_scale = 3.0f;  // RandomModelOptions' default
  // With the tensor cores allowed: whether they take nine tenths of the Gaussians or more (a
  // block that would hold fewer than 16 goes to the exact kernels), fewer, or none.
  enum { kMost, kSome, kNone } tensor = kMost;
};

// A GMM whose second half of Gaussians sits `distance` away from the first in every dimension.
GmmModel TwoClusters(int32_t gauss, int32_t dim, float distance) {
  RandomModelOptions options;
  options.num_states = 1;
  options.dim = dim;
  options.min_gauss = options.max_gauss = gauss;
  options.min_var = 0.05f;
  options.max_var = 0.5f;
  options.mean_scale = 1.0f;
  GmmModelSpec spec = RandomModel(options, 23).spec();
  for (int32_t g = gauss / 2; g < gauss; ++g) {
    for (int32_t d = 0; d < dim; ++d) spec.means[size_t(g) * dim + d] += distance;
  }
  auto model = GmmModel::Create(std::move(spec));
  EXPECT_TRUE(model.ok()) << model.status();
  return *std::move(model);
}

void ExpectOneIterationMatches(const GmmModel& model, const Case& c, bool tensor_cores) {
  const Matrix frames = Sample(model, 0, c.frames, c.sigmas, 3);
  GmmStats cpu = GmmStats::ForModel(model, kGmmAll), gpu = cpu;
  ASSERT_TRUE(
      GmmAccumulator(model).AccumulateFrames(0, frames.data.data(), frames.rows, 0, &cpu).ok());
  auto stats = CudaGmmStatistics::Create(model, 0, {.tensor_cores = tensor_cores});
  ASSERT_TRUE(stats.ok()) << stats.status();
  const int32_t tensor = (*stats)->tensor_gaussians();
  if (!tensor_cores || c.tensor == Case::kNone) {
    EXPECT_EQ(tensor, 0);
  } else if (c.tensor == Case::kMost) {
    EXPECT_GE(10 * tensor, 9 * c.gauss);
  } else {
    EXPECT_GT(tensor, 0);
    EXPECT_LT(tensor, c.gauss);
  }
  ASSERT_TRUE((*stats)->AccumulateHost(frames.data.data(), frames.rows).ok());
  ASSERT_TRUE((*stats)->AddTo(&gpu).ok());
  if (c.frames == 1) {
    for (size_t g = 0; g < cpu.occupancy.size(); ++g) {
      EXPECT_NEAR(gpu.occupancy[g], cpu.occupancy[g], 1e-5);
    }
    EXPECT_NEAR(gpu.total_log_like, cpu.total_log_like, 1e-3);
    return;
  }
  ExpectSameUpdate(model, gpu, cpu);
}

TEST_F(CudaEmStatsTest, OneIterationMatchesTheCpuFloat64Statistics) {
  const Case cases[] = {
      {"37 Gaussians, dimension 13", 37, 13, 20000, 1.0, 0.0f, 0.2f, 4.0f},
      {"200 Gaussians, dimension 39", 200, 39, 30000, 1.0, -20.0f, 0.2f, 4.0f},
      {"300 Gaussians, dimension 40, means too spread for the tensor cores", 300, 40, 30000, 1.0,
       5.0f, 0.2f, 4.0f, 6.0f, Case::kNone},
      {"70 Gaussians, dimension 128", 70, 128, 8000, 1.0, 0.0f, 0.2f, 4.0f, 3.0f, Case::kNone},
      {"far from the means", 37, 13, 20000, 8.0, 0.0f, 0.2f, 4.0f},
      {"tiny variances at 100", 50, 13, 20000, 1.0, 100.0f, 1e-3f, 1e-2f, 3.0f, Case::kNone},
      {"one frame", 37, 13, 1, 1.0, 0.0f, 0.2f, 4.0f},
      {"variances from 1e-2 to 1e3", 150, 39, 30000, 1.0, 0.0f, 1e-2f, 1e3f},
  };
  for (const bool tensor_cores : {true, false}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.name) + (tensor_cores ? ", tensor cores" : ", exact kernels"));
      RandomModelOptions options;
      options.num_states = 1;
      options.dim = c.dim;
      options.min_gauss = options.max_gauss = c.gauss;
      options.mean_offset = c.mean_offset;
      options.min_var = c.min_var;
      options.max_var = c.max_var;
      options.mean_scale = c.mean_scale;
      ExpectOneIterationMatches(RandomModel(options, 17), c, tensor_cores);
    }
  }
}

// Frames that sit far outside the model, one in 50 (a corrupt or mislabelled frame: 10^4 away in
// one dimension), beside ordinary ones: the Gaussians that take them get x'^2 near 10^8 in their
// sums, beside values near 1 from the same stage of frames.
TEST_F(CudaEmStatsTest, OutlierFramesAmongOrdinaryOnes) {
  RandomModelOptions options;
  options.num_states = 1;
  options.dim = 39;
  options.min_gauss = options.max_gauss = 200;
  const GmmModel model = RandomModel(options, 29);
  Matrix frames = Sample(model, 0, 30000, 1.0, 5);
  for (int32_t t = 0; t < frames.rows; t += 50) {
    frames.at(t, t % frames.cols) += (t % 100 == 0 ? 1e4f : -1e4f);
  }
  GmmStats cpu = GmmStats::ForModel(model, kGmmAll), gpu = cpu;
  ASSERT_TRUE(
      GmmAccumulator(model).AccumulateFrames(0, frames.data.data(), frames.rows, 0, &cpu).ok());
  auto stats = CudaGmmStatistics::Create(model, 0, {.tensor_cores = true});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_GE(10 * (*stats)->tensor_gaussians(), 9 * 200);
  ASSERT_TRUE((*stats)->AccumulateHost(frames.data.data(), frames.rows).ok());
  ASSERT_TRUE((*stats)->AddTo(&gpu).ok());
  ExpectSameUpdate(model, gpu, cpu);
}

// Two clusters 40 apart with variances under 0.5: a block of Gaussians that took both would have
// its shift between them, far from either. 160 Gaussians, 80 a cluster: the blocks close at the
// gap and all take the tensor cores. Then a full block and 2 more a cluster: the blocks of 2 go
// to the exact kernels.
TEST_F(CudaEmStatsTest, ClustersFarApartShareThePaths) {
  const Case all{"two clusters", 160, 24, 30000, 1.0, 0.0f, 0.05f, 0.5f, 3.0f, Case::kMost};
  ExpectOneIterationMatches(TwoClusters(160, 24, 40.0f), all, true);
  const int32_t gauss = 2 * (kEmTensorBlockGauss + 2);
  const Case some{
      "two clusters, odd blocks", gauss, 24, 30000, 1.0, 0.0f, 0.05f, 0.5f, 3.0f, Case::kSome};
  ExpectOneIterationMatches(TwoClusters(gauss, 24, 40.0f), some, true);
}

TEST_F(CudaEmStatsTest, StreamedChunksEqualResidentAndAddUp) {
  RandomModelOptions options;
  options.num_states = 3;  // the middle pdf's Gaussians only
  options.dim = 39;
  options.min_gauss = 20;
  options.max_gauss = 90;
  const GmmModel model = RandomModel(options, 5);
  const Matrix frames = Sample(model, 1, 10001, 1.0, 9);
  auto streamed = CudaGmmStatistics::Create(model, 1, {.device = 0, .chunk_frames = 999});
  auto resident = CudaGmmStatistics::Create(model, 1, {.device = 0, .chunk_frames = 4096});
  ASSERT_TRUE(streamed.ok() && resident.ok());
  GmmStats a = GmmStats::ForModel(model, kGmmAll), b = a, cpu = a;
  // Two calls, pinned memory, one AddTo.
  auto pin = PinnedHostRange::Create(frames.data.data(), frames.data.size() * sizeof(float));
  ASSERT_TRUE(pin.ok()) << pin.status();
  ASSERT_TRUE((*streamed)->AccumulateHost(frames.data.data(), 6000).ok());
  ASSERT_TRUE((*streamed)->AccumulateHost(frames.row(6000), frames.rows - 6000).ok());
  ASSERT_TRUE((*streamed)->AddTo(&a).ok());
  ASSERT_TRUE((*resident)->UploadFrames(frames.data.data(), frames.rows).ok());
  ASSERT_TRUE((*resident)->AccumulateResident().ok());
  ASSERT_TRUE((*resident)->AddTo(&b).ok());
  EXPECT_EQ(a.total_frames, 10001);
  for (size_t i = 0; i < a.occupancy.size(); ++i) {
    EXPECT_NEAR(a.occupancy[i], b.occupancy[i], 1e-6 * (1 + b.occupancy[i]));
  }
  for (size_t i = 0; i < a.second.size(); ++i) {
    EXPECT_NEAR(a.second[i], b.second[i], 1e-6 * (1 + std::abs(b.second[i])));
  }
  // Only pdf 1's Gaussians have statistics.
  for (uint32_t g = model.gauss_begin(0); g < model.gauss_end(0); ++g)
    EXPECT_EQ(a.occupancy[g], 0.0);
  // AddTo zeroed the device: a second pass adds as much again.
  ASSERT_TRUE((*resident)->AccumulateResident().ok());
  ASSERT_TRUE((*resident)->AddTo(&b).ok());
  EXPECT_EQ(b.total_frames, 2 * 10001);
  ASSERT_TRUE(
      GmmAccumulator(model).AccumulateFrames(1, frames.data.data(), frames.rows, 0, &cpu).ok());
  const GmmStats once = cpu;
  ASSERT_TRUE(cpu.Add(once).ok());
  ExpectSameUpdate(model, b, cpu);
}

TEST_F(CudaEmStatsTest, SetModelKeepsTheResidentFrames) {
  RandomModelOptions options;
  options.num_states = 1;
  options.dim = 20;
  options.min_gauss = options.max_gauss = 30;
  const GmmModel a = RandomModel(options, 1);
  options.min_gauss = options.max_gauss = 100;  // a new iteration after mixing up
  const GmmModel b = RandomModel(options, 2);
  const Matrix frames = Sample(b, 0, 5000, 1.0, 4);
  auto stats = CudaGmmStatistics::Create(a, 0, {});
  ASSERT_TRUE(stats.ok());
  ASSERT_TRUE((*stats)->UploadFrames(frames.data.data(), frames.rows).ok());
  ASSERT_TRUE((*stats)->SetModel(b, 0).ok());
  ASSERT_TRUE((*stats)->AccumulateResident().ok());
  GmmStats gpu = GmmStats::ForModel(b, kGmmAll), cpu = gpu;
  ASSERT_TRUE((*stats)->AddTo(&gpu).ok());
  ASSERT_TRUE(GmmAccumulator(b).AccumulateFrames(0, frames.data.data(), frames.rows, 0, &cpu).ok());
  ExpectSameUpdate(b, gpu, cpu);
  options.dim = 21;  // frames of another dimension stay: the model must fit them
  EXPECT_FALSE((*stats)->SetModel(RandomModel(options, 3), 0).ok());
}

TEST_F(CudaEmStatsTest, RefusesWhatItCannotDo) {
  RandomModelOptions options;
  options.num_states = 1;
  options.dim = 129;
  EXPECT_FALSE(CudaGmmStatistics::Create(RandomModel(options, 1), 0, {}).ok());
  options.dim = 13;
  EXPECT_FALSE(CudaGmmStatistics::Create(RandomModel(options, 1), 1, {}).ok());
}

}  // namespace
}  // namespace gmmscore

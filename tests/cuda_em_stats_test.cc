// The GPU E-step (kernels/cuda/cuda_gmm_statistics: the tensor-core kernels of em_tensor_kernel
// for the Gaussians they keep accurate, em_stats_kernel for the rest, and the exact kernels alone)
// against the CPU's float64 statistics (train/accumulate): one EM iteration's re-estimated
// weights, means and variances within 1e-4 relative, on single GMMs with Gaussian counts that are
// not a multiple of the tile, dimensions 13, 39, 40 and 128, one frame, frames far from the means,
// variances five decades apart, frames 10^4 outside the model among ordinary ones, tiny variances
// far from the origin (where float32 sums of x^2 would cancel), clusters of Gaussians far apart
// (some to each path), and real MFCC frames against every Gaussian of the Kaldi model pooled into
// one GMM; streamed in chunks equals resident; sums accumulate across calls and devices' worth of
// AddTo.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "formats/model_io.h"
#include "kernels/cuda/em/cuda_gmm_statistics.h"
#include "kernels/cuda/em/em_tensor_kernel.h"  // kEmTensorBlockGauss
#include "model/random_model.h"
#include "tests/cuda_test_util.h"
#include "tests/test_util.h"
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

// A single GMM (one state) of `gauss` Gaussians in `dim` dimensions, RandomModel's other defaults.
RandomModelOptions OneGmm(int32_t dim, int32_t gauss) {
  RandomModelOptions options;
  options.num_states = 1;
  options.dim = dim;
  options.min_gauss = options.max_gauss = gauss;
  return options;
}

MleOptions KeepAll() {
  MleOptions options;
  options.min_gaussian_occupancy = 0.0;
  options.min_gaussian_weight = 0.0;
  options.min_variance = 1e-30;
  options.remove_low_count_gaussians = false;
  return options;
}

// min_occupancy: a Gaussian with a few hundredths of a frame has no meaningful variance to
// compare; one with about one frame has a variance that is the difference of nearly equal numbers
// even in float64 (its frame's square less its mean's), which gmm-est's default
// --min-gaussian-occupancy of 10 never re-estimates.
void ExpectSameUpdate(const GmmModel& model, const GmmStats& gpu, const GmmStats& cpu,
                      double min_occupancy = 0.5) {
  EXPECT_NEAR(gpu.total_frames, cpu.total_frames, 0.0);
  EXPECT_NEAR(gpu.total_log_like, cpu.total_log_like, 1e-5 * std::abs(cpu.total_log_like) + 1e-3);
  auto a = MleUpdate(KeepAll(), gpu, kGmmAll, model, nullptr);
  auto b = MleUpdate(KeepAll(), cpu, kGmmAll, model, nullptr);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  int checked = 0;
  for (int64_t g = 0; g < model.num_gauss(); ++g) {
    if (cpu.occupancy[size_t(g)] < min_occupancy) continue;
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
  RandomModelOptions options = OneGmm(dim, gauss);
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
      RandomModelOptions options = OneGmm(c.dim, c.gauss);
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
  const GmmModel model = RandomModel(OneGmm(39, 200), 29);
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

// Every Gaussian of the Kaldi model in one GMM (weights divided among the pdfs), and the
// utterances' 39-dimensional MFCC + delta frames: the energy coefficient's large values and the
// variances of a trained model, where the expanded form's products are largest. Besides the
// re-estimated parameters of the Gaussians gmm-est would re-estimate, the log-likelihood a frame
// (the tensor cores' accumulation is the place it could drift) within 1e-5 nats of float64 on
// average.
TEST_F(CudaEmStatsTest, KaldiGaussiansOnRealFrames) {
  auto loaded = LoadModel(testing::DataPath("kaldi-mono/final.mdl"));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const GmmModel& kaldi = loaded->model;
  GmmModelSpec spec;
  spec.dim = kaldi.dim();
  spec.gauss_begin = {0, uint32_t(kaldi.num_gauss())};
  for (int32_t pdf = 0; pdf < kaldi.num_states(); ++pdf) {
    for (uint32_t g = kaldi.gauss_begin(pdf); g < kaldi.gauss_end(pdf); ++g) {
      spec.weights.push_back(float(std::exp(kaldi.log_weight(g)) / kaldi.num_states()));
      spec.means.insert(spec.means.end(), kaldi.mean(g).begin(), kaldi.mean(g).end());
      spec.variances.insert(spec.variances.end(), kaldi.variance(g).begin(),
                            kaldi.variance(g).end());
    }
  }
  auto pooled = GmmModel::Create(std::move(spec));
  ASSERT_TRUE(pooled.ok()) << pooled.status();
  Matrix frames(0, kaldi.dim());
  for (const auto& [key, x] :
       testing::ReadTable("ark:" + testing::DataPath("kaldi-mono/feats.ark"))) {
    frames.data.insert(frames.data.end(), x.data.begin(), x.data.end());
    frames.rows += x.rows;
  }
  ASSERT_GT(frames.rows, 1000);
  GmmStats cpu = GmmStats::ForModel(*pooled, kGmmAll), gpu = cpu;
  ASSERT_TRUE(
      GmmAccumulator(*pooled).AccumulateFrames(0, frames.data.data(), frames.rows, 0, &cpu).ok());
  auto stats = CudaGmmStatistics::Create(*pooled, 0, {});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_GT((*stats)->tensor_gaussians(), 0);
  ASSERT_TRUE((*stats)->AccumulateHost(frames.data.data(), frames.rows).ok());
  ASSERT_TRUE((*stats)->AddTo(&gpu).ok());
  const double per_frame = (gpu.total_log_like - cpu.total_log_like) / frames.rows;
  std::printf(
      "Kaldi's %lld Gaussians (%d on the tensor cores), %d real frames: log-likelihood "
      "%.6f a frame, %.2e from float64\n",
      static_cast<long long>(pooled->num_gauss()), (*stats)->tensor_gaussians(), frames.rows,
      cpu.total_log_like / frames.rows, per_frame);
  EXPECT_LE(std::abs(per_frame), 1e-5);
  ExpectSameUpdate(*pooled, gpu, cpu, 10.0);
}

// The statistics kernel sums each thread's products in float32 for kEmTensorFlushFrames frames
// before adding them to double. em_bench's case (a slice of 65,000 frames a block) in small: a
// 2048-Gaussian model over the statistics grid's slices (48 on 132 multiprocessors) of over
// 2 x kEmTensorFlushFrames frames each, so that every slice sums in float32 at least twice over the
// whole stretch; the worst parameter error over Gaussians of 100 frames or more within 2e-5
// (measured on an H100: 4.9e-6 to 6.5e-6 whether the sums flush every 256, 2048 or 4096 frames;
// em_bench, with far more frames a Gaussian, about 1.2e-6).
TEST_F(CudaEmStatsTest, LongSlicesMatchFloat64) {
  const GmmModel model = RandomModel(OneGmm(40, 2048), 31);
  const int32_t frames = 48 * (2 * kEmTensorFlushFrames + 100);
  const Matrix x = Sample(model, 0, frames, 1.5, 17);
  GmmStats cpu = GmmStats::ForModel(model, kGmmAll), gpu = cpu;
  ASSERT_TRUE(GmmAccumulator(model).AccumulateFrames(0, x.data.data(), x.rows, 0, &cpu).ok());
  auto stats = CudaGmmStatistics::Create(model, 0, {});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ((*stats)->tensor_gaussians(), 2048);
  ASSERT_TRUE((*stats)->UploadFrames(x.data.data(), x.rows).ok());
  ASSERT_TRUE((*stats)->AccumulateResident().ok());
  ASSERT_TRUE((*stats)->AddTo(&gpu).ok());
  ExpectSameUpdate(model, gpu, cpu);
  auto a = MleUpdate(KeepAll(), gpu, kGmmAll, model, nullptr);
  auto b = MleUpdate(KeepAll(), cpu, kGmmAll, model, nullptr);
  ASSERT_TRUE(a.ok() && b.ok());
  double worst = 0.0;
  for (int64_t g = 0; g < model.num_gauss(); ++g) {
    if (cpu.occupancy[size_t(g)] < 100.0) continue;
    for (int32_t d = 0; d < model.dim(); ++d) {
      const double var = b->variance(g)[d];
      worst = std::max(worst, std::abs(a->variance(g)[d] - var) / var);
      worst = std::max(worst, std::abs(a->mean(g)[d] - b->mean(g)[d]) / std::sqrt(var));
    }
  }
  std::printf("%d frames, 2048 Gaussians: worst parameter error %.3g\n", frames, worst);
  EXPECT_LE(worst, 2e-5);
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
  // Resident frames in launches of 3000 (four, the last short), and in one.
  auto resident = CudaGmmStatistics::Create(
      model, 1, {.device = 0, .chunk_frames = 4096, .resident_launch_frames = 3000});
  auto resident_whole = CudaGmmStatistics::Create(model, 1, {.device = 0, .chunk_frames = 999});
  ASSERT_TRUE(streamed.ok() && resident.ok() && resident_whole.ok());
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
  GmmStats whole = GmmStats::ForModel(model, kGmmAll);
  ASSERT_TRUE((*resident_whole)->UploadFrames(frames.data.data(), frames.rows).ok());
  ASSERT_TRUE((*resident_whole)->AccumulateResident().ok());
  ASSERT_TRUE((*resident_whole)->AddTo(&whole).ok());
  EXPECT_EQ(a.total_frames, 10001);
  EXPECT_EQ(whole.total_frames, 10001);
  for (size_t i = 0; i < a.occupancy.size(); ++i) {
    EXPECT_NEAR(a.occupancy[i], b.occupancy[i], 1e-6 * (1 + b.occupancy[i]));
    EXPECT_NEAR(whole.occupancy[i], b.occupancy[i], 1e-6 * (1 + b.occupancy[i]));
  }
  for (size_t i = 0; i < a.second.size(); ++i) {
    EXPECT_NEAR(a.second[i], b.second[i], 1e-6 * (1 + std::abs(b.second[i])));
    EXPECT_NEAR(whole.second[i], b.second[i], 1e-6 * (1 + std::abs(b.second[i])));
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
  RandomModelOptions options = OneGmm(20, 30);
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

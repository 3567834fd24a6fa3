// em_bench: time per EM iteration (the E-step statistics: what an iteration costs; the M-step is
// microseconds on the host) of one diagonal GMM, for the cases of Machlica et al., "GPU-based
// EM statistics for diagonal GMMs" (3,125,600 frames x 40 dimensions, 32 ... 2048 Gaussians; and
// Table III's 153,600 x 32 x 32): gmmscore's fused kernels with frames resident on the GPU and
// streamed from pinned host memory, against the plain cuBLAS path (bench/cuda/cublas_em_peer.h) in
// the same run, and the CPU (train/accumulate.h) at 1 and all threads on a subset of the frames.
// "tens" is how many Gaussians the tensor cores took; "exact" the exact kernels alone on the same
// frames (tensor_cores = false).
// GPU times are CUDA-event medians after a warm-up; each case has its own random model and frames.
//
//   em_bench [--quick] [--only K] [--stream-gb N] [--out-of-core-gb N] [--chunk-frames N]
//            [--resident-launch-frames N] [--peer-chunk-frames N]
//
// --quick: 312,560 frames for the seed paper's cases; --only K: that case alone (for profilers).
// --chunk-frames N: the frames a streamed copy brings (2^18 unless set); --resident-launch-frames
// N: the resident frames one launch covers (CudaGmmStatistics::Options' default unless set);
// --peer-chunk-frames N: the rows of the cuBLAS path's frames x Gaussians matrix (2^18).
// --stream-gb N also streams an N GiB pinned buffer of frames through the 2048-Gaussian model and
// reports its speed against resident; --out-of-core-gb N streams N GiB of frames made on the host
// 4 GiB at a time while the GPU takes the last 4 (a data set larger than the GPU's memory, and
// than the host's).
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/cuda/cublas_em_peer.h"
#include "kernels/cuda/common/event_timing.h"
#include "kernels/cuda/em/cuda_gmm_statistics.h"
#include "model/random_model.h"
#include "train/accumulate.h"
#include "train/mle_update.h"

namespace gmmscore {
namespace {

constexpr int kWarmup = 1;
constexpr int kTimed = 3;

int32_t chunk_frames = 1 << 18;  // --chunk-frames
int32_t resident_launch_frames = CudaGmmStatistics::Options().resident_launch_frames;
int32_t peer_chunk_frames = 1 << 18;  // --peer-chunk-frames

void Check(const absl::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "em_bench: %s: %s\n", what, std::string(s.message()).c_str());
    std::exit(1);
  }
}

// MFCC-like frames: every value N(0, 1) scaled per dimension, drawn in parallel.
void FillFrames(float* x, int64_t frames, int32_t dim, uint32_t seed) {
#pragma omp parallel
  {
    std::mt19937 rng(seed * 7919u + uint32_t(omp_get_thread_num()));
    std::normal_distribution<float> normal(0.0f, 1.0f);
#pragma omp for schedule(static)
    for (int64_t t = 0; t < frames; ++t) {
      for (int32_t d = 0; d < dim; ++d) x[size_t(t) * dim + d] = 3.0f * normal(rng);
    }
  }
}

GmmModel MakeUbm(int32_t gauss, int32_t dim, uint32_t seed) {
  RandomModelOptions options;
  options.num_states = 1;
  options.dim = dim;
  options.min_gauss = options.max_gauss = gauss;
  return RandomModel(options, seed);
}

// Largest relative difference of the updated variances (and means, relative to sigma) between
// two sets of statistics of the same model, over the Gaussians with 100 frames or more (fewer
// give variances that a hundredth of a frame moves); -1 where there are none.
double WorstRelativeDifference(const GmmModel& model, const GmmStats& a, const GmmStats& b) {
  MleOptions keep;
  keep.min_gaussian_occupancy = 0.0;
  keep.min_gaussian_weight = 0.0;
  keep.min_variance = 1e-30;
  keep.remove_low_count_gaussians = false;
  auto ma = MleUpdate(keep, a, kGmmAll, model, nullptr);
  auto mb = MleUpdate(keep, b, kGmmAll, model, nullptr);
  Check(ma.status(), "update");
  Check(mb.status(), "update");
  double worst = -1.0;
  for (int64_t g = 0; g < model.num_gauss(); ++g) {
    if (b.occupancy[size_t(g)] < 100.0) continue;
    worst = std::max(worst, 0.0);
    for (int32_t d = 0; d < model.dim(); ++d) {
      const double var = mb->variance(g)[d];
      worst = std::max(worst, std::abs(ma->variance(g)[d] - var) / var);
      worst = std::max(worst, std::abs(ma->mean(g)[d] - mb->mean(g)[d]) / std::sqrt(var));
    }
  }
  return worst;
}

void RunCase(int64_t frames, int32_t dim, int32_t gauss, int64_t cpu_frames, uint32_t seed) {
  const GmmModel model = MakeUbm(gauss, dim, seed);
  PinnedArray<float> host;
  {
    auto allocated = PinnedArray<float>::Allocate(size_t(frames) * dim);
    Check(allocated.status(), "pinned frames");
    host = *std::move(allocated);
  }
  FillFrames(host.get(), frames, dim, seed);
  const int32_t chunk = chunk_frames;
  auto ours = CudaGmmStatistics::Create(
      model, 0,
      {.device = 0, .chunk_frames = chunk, .resident_launch_frames = resident_launch_frames});
  Check(ours.status(), "CudaGmmStatistics");
  auto peer = CublasEmPeer::Create(model, peer_chunk_frames);
  Check(peer.status(), "CublasEmPeer");
  Check((*ours)->UploadFrames(host.get(), frames), "upload");

  auto resident = MedianMilliseconds((*ours)->stream(), kWarmup, kTimed,
                                     [&](int) { return (*ours)->AccumulateResident(); });
  Check(resident.status(), "resident");
  // The exact kernels alone (every Gaussian centred on its own mean): the first GPU version.
  double exact_ms = 0.0;
  {
    auto exact = CudaGmmStatistics::Create(model, 0,
                                           {.device = 0,
                                            .chunk_frames = chunk,
                                            .resident_launch_frames = resident_launch_frames,
                                            .tensor_cores = false});
    Check(exact.status(), "CudaGmmStatistics (exact)");
    Check((*exact)->UploadFrames(host.get(), frames), "upload (exact)");
    auto ms = MedianMilliseconds((*exact)->stream(), kWarmup, kTimed,
                                 [&](int) { return (*exact)->AccumulateResident(); });
    Check(ms.status(), "exact");
    exact_ms = *ms;
  }
  auto streamed = MedianMilliseconds((*ours)->stream(), kWarmup, kTimed, [&](int) {
    return (*ours)->AccumulateHost(host.get(), frames);
  });
  Check(streamed.status(), "streamed");
  GmmStats ours_stats = GmmStats::ForModel(model, kGmmAll);
  Check((*ours)->AddTo(&ours_stats), "AddTo");

  // The peer reads the same frames, resident in its own device copy.
  DeviceArray<float> device_frames;
  {
    auto a = DeviceArray<float>::Allocate(size_t(frames) * dim);
    Check(a.status(), "peer frames");
    device_frames = *std::move(a);
  }
  Check(CudaStatus(cudaMemcpy(device_frames.get(), host.get(), device_frames.bytes(),
                              cudaMemcpyHostToDevice),
                   "cudaMemcpy"),
        "peer upload");
  auto peer_ms = MedianMilliseconds((*peer)->stream(), kWarmup, kTimed, [&](int) {
    return (*peer)->Accumulate(device_frames.get(), frames);
  });
  Check(peer_ms.status(), "peer");
  GmmStats peer_stats = GmmStats::ForModel(model, kGmmAll);
  Check((*peer)->AddTo(&peer_stats), "peer AddTo");
  device_frames = DeviceArray<float>();

  // CPU on a subset, scaled to the whole; and the accuracy of both GPU paths against its float64
  // statistics, on that subset (fresh single passes).
  const int64_t subset = std::min(frames, cpu_frames);
  const GmmAccumulator cpu(model);
  auto time_cpu = [&](int threads, GmmStats* stats) {
    const auto start = std::chrono::steady_clock::now();
    Check(cpu.AccumulateFrames(0, host.get(), subset, threads, stats).status(), "cpu");
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
               .count() *
           double(frames) / double(subset);
  };
  GmmStats cpu1 = GmmStats::ForModel(model, kGmmAll), cpu_all = cpu1;
  const double cpu1_ms = time_cpu(1, &cpu1);
  const double cpu_all_ms = time_cpu(0, &cpu_all);
  GmmStats ours_subset = GmmStats::ForModel(model, kGmmAll), peer_subset = ours_subset;
  Check((*ours)->AccumulateHost(host.get(), subset), "subset");
  Check((*ours)->AddTo(&ours_subset), "subset AddTo");
  {
    auto a = DeviceArray<float>::Allocate(size_t(subset) * dim);
    Check(a.status(), "subset frames");
    Check(CudaStatus(cudaMemcpy(a->get(), host.get(), a->bytes(), cudaMemcpyHostToDevice),
                     "cudaMemcpy"),
          "subset upload");
    Check((*peer)->Accumulate(a->get(), subset), "peer subset");
    Check((*peer)->AddTo(&peer_subset), "peer subset AddTo");
  }
  std::printf(
      "%9lld x %3d x %4d | %4d %9.2f %9.2f %9.2f | %9.2f %6.2fx | %10.1f %9.1f (%2d thr) | %8.1e "
      "%8.1e\n",
      static_cast<long long>(frames), dim, gauss, (*ours)->tensor_gaussians(), *resident, exact_ms,
      *streamed, *peer_ms, *peer_ms / *resident, cpu1_ms, cpu_all_ms, omp_get_max_threads(),
      WorstRelativeDifference(model, ours_subset, cpu_all),
      WorstRelativeDifference(model, peer_subset, cpu_all));
  std::fflush(stdout);
}

// Streams `gib` GiB of pinned frames through the model `passes` times: the per-frame time
// against the resident case.
void RunStreaming(double gib, int32_t dim, int32_t gauss) {
  const GmmModel model = MakeUbm(gauss, dim, 77);
  const int64_t frames = int64_t(gib * double(1ull << 30) / (sizeof(float) * dim));
  auto host = PinnedArray<float>::Allocate(size_t(frames) * dim);
  Check(host.status(), "pinned frames");
  FillFrames(host->get(), frames, dim, 78);
  auto ours = CudaGmmStatistics::Create(model, 0, {});
  Check(ours.status(), "CudaGmmStatistics");
  const int64_t resident_frames = 3125600;
  Check((*ours)->UploadFrames(host->get(), resident_frames), "upload");
  auto resident = MedianMilliseconds((*ours)->stream(), kWarmup, kTimed,
                                     [&](int) { return (*ours)->AccumulateResident(); });
  Check(resident.status(), "resident");
  Check((*ours)->UploadFrames(host->get(), 0), "free");
  auto streamed = MedianMilliseconds(
      (*ours)->stream(), 0, 2, [&](int) { return (*ours)->AccumulateHost(host->get(), frames); });
  Check(streamed.status(), "streamed");
  size_t free_bytes = 0, total_bytes = 0;
  Check(CudaStatus(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo"), "meminfo");
  const double resident_per_frame = *resident / double(resident_frames);
  const double streamed_per_frame = *streamed / double(frames);
  std::printf(
      "streaming %.1f GiB (%lld frames x %d, %d Gaussians; GPU free %.1f GiB) per pass: %.1f ms, "
      "%.3g frames/s; resident %.3g frames/s: streamed at %.0f%% of resident\n",
      gib, static_cast<long long>(frames), dim, gauss, double(free_bytes) / double(1ull << 30),
      *streamed, 1e3 / streamed_per_frame, 1e3 / resident_per_frame,
      100.0 * resident_per_frame / streamed_per_frame);
}

// Frames that exist only while they pass: uniform in [-5, 5), made by `threads` threads with
// xorshift64* (fast enough to keep ahead of the GPU), seeded by `round`.
void GenerateFrames(float* x, size_t values, uint64_t round) {
#pragma omp parallel
  {
    uint64_t state = 0x9e3779b97f4a7c15ull * (round * 1024 + uint64_t(omp_get_thread_num()) + 1);
#pragma omp for schedule(static)
    for (int64_t i = 0; i < int64_t(values); ++i) {
      state ^= state >> 12;
      state ^= state << 25;
      state ^= state >> 27;
      const uint64_t r = state * 0x2545f4914f6cdd1dull;
      x[i] = float(r >> 40) * (10.0f / 16777216.0f) - 5.0f;
    }
  }
}

// Out of core: `gib` GiB of frames, far more than the GPU holds, made on the host a buffer at a
// time while the GPU takes the previous buffer, as a reader of files or a network would feed it;
// their per-frame rate against resident frames.
void RunOutOfCore(double gib, int32_t dim, int32_t gauss) {
  const GmmModel model = MakeUbm(gauss, dim, 79);
  auto ours = CudaGmmStatistics::Create(model, 0, {});
  Check(ours.status(), "CudaGmmStatistics");
  const int64_t resident_frames = 3125600;
  std::vector<float> first(size_t(resident_frames) * dim);
  GenerateFrames(first.data(), first.size(), 0);
  Check((*ours)->UploadFrames(first.data(), resident_frames), "upload");
  auto resident = MedianMilliseconds((*ours)->stream(), kWarmup, kTimed,
                                     [&](int) { return (*ours)->AccumulateResident(); });
  Check(resident.status(), "resident");
  Check((*ours)->UploadFrames(first.data(), 0), "free");
  size_t free_bytes = 0, total_bytes = 0;
  Check(CudaStatus(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo"), "meminfo");
  const int64_t buffer_frames = int64_t(4.0 * double(1ull << 30) / (sizeof(float) * dim));
  PinnedArray<float> buffers[2];
  for (auto& b : buffers) {
    auto a = PinnedArray<float>::Allocate(size_t(buffer_frames) * dim);
    Check(a.status(), "pinned buffer");
    b = *std::move(a);
  }
  const int64_t rounds =
      int64_t(std::ceil(gib * double(1ull << 30) / (double(buffer_frames) * dim * sizeof(float))));
  GenerateFrames(buffers[0].get(), size_t(buffer_frames) * dim, 1);
  Check((*ours)->Synchronize(), "sync");
  const auto start = std::chrono::steady_clock::now();
  double making_ms = 0.0;  // the host making the next buffer, while the GPU takes this one
  for (int64_t r = 0; r < rounds; ++r) {
    Check((*ours)->AccumulateHost(buffers[r % 2].get(), buffer_frames), "stream");
    const auto made = std::chrono::steady_clock::now();
    if (r + 1 < rounds) {
      GenerateFrames(buffers[(r + 1) % 2].get(), size_t(buffer_frames) * dim, uint64_t(r + 2));
    }
    making_ms +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - made).count();
    Check((*ours)->Synchronize(), "sync");
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const double frames = double(rounds) * double(buffer_frames);
  const double streamed_rate = frames / ms * 1e3;
  const double resident_rate = double(resident_frames) / *resident * 1e3;
  const double bytes = frames * dim * sizeof(float);
  std::printf(
      "out of core: %.0f GiB of frames (%.1fx the GPU's %.1f GiB free), made on the host 4 GiB at "
      "a "
      "time, through the %d-Gaussian model in %.1f s (the host making frames %.1f s of it): %.3g "
      "frames/s against %.3g resident (%.0f%%)\n",
      bytes / double(1ull << 30), bytes / double(free_bytes),
      double(free_bytes) / double(1ull << 30), gauss, ms / 1e3, making_ms / 1e3, streamed_rate,
      resident_rate, 100.0 * streamed_rate / resident_rate);
}

}  // namespace
}  // namespace gmmscore

int main(int argc, char** argv) {
  bool quick = false;
  double stream_gib = 0.0, out_of_core_gib = 0.0;
  int only = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--stream-gb") == 0 && i + 1 < argc) {
      stream_gib = std::atof(argv[++i]);
    } else if (std::strcmp(argv[i], "--out-of-core-gb") == 0 && i + 1 < argc) {
      out_of_core_gib = std::atof(argv[++i]);
    } else if (std::strcmp(argv[i], "--chunk-frames") == 0 && i + 1 < argc &&
               std::atoi(argv[i + 1]) > 0) {
      gmmscore::chunk_frames = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--resident-launch-frames") == 0 && i + 1 < argc &&
               std::atoi(argv[i + 1]) > 0) {
      gmmscore::resident_launch_frames = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--peer-chunk-frames") == 0 && i + 1 < argc &&
               std::atoi(argv[i + 1]) > 0) {
      gmmscore::peer_chunk_frames = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: em_bench [--quick] [--only K] [--stream-gb N] [--out-of-core-gb N] "
                   "[--chunk-frames N] [--resident-launch-frames N] [--peer-chunk-frames N]\n");
      return 2;
    }
  }
  cudaDeviceProp prop{};
  gmmscore::Check(
      gmmscore::CudaStatus(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties"), "device");
  std::printf("em_bench on %s: ms per EM iteration (E-step statistics), medians of %d after %d\n",
              prop.name, gmmscore::kTimed, gmmscore::kWarmup);
  std::printf(
      "   frames x dim x    K | tens  resident     exact  streamed |  cuBLAS  ratio |   CPU 1 thr "
      "  CPU all       | ours err peer err\n");
  if (only == 0) gmmscore::RunCase(153600, 32, 32, 153600, 1);  // Table III
  const int64_t seed_frames = quick ? 312560 : 3125600;
  for (int32_t gauss : {32, 64, 128, 256, 512, 1024, 2048}) {
    if (only != 0 && gauss != only) continue;
    gmmscore::RunCase(seed_frames, 40, gauss, gauss >= 1024 ? 4000 : 20000, uint32_t(gauss));
  }
  if (stream_gib > 0.0) gmmscore::RunStreaming(stream_gib, 40, 2048);
  if (out_of_core_gib > 0.0) gmmscore::RunOutOfCore(out_of_core_gib, 40, 2048);
  return 0;
}

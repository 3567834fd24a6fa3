#include <cmath>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/common/cuda_status.h"
#include "kernels/cuda/common/log_sum.cuh"
#include "kernels/cuda/em/em_stats_kernel.h"

namespace gmmscore {
namespace {

constexpr int kThreads = 256;

// Shared-memory tiles of one block: kFrames frames (row stride `x_stride`, zero beyond the chunk)
// and kGauss Gaussians, transposed (dimension-major) so that a warp reads consecutive Gaussians.
template <int kGauss, int kFrames>
struct Tiles {
  float* x;         // [kFrames][x_stride]
  float* mean;      // [dim][kGauss]
  float* inv_var;   // [dim][kGauss]
  float* log_norm;  // [kGauss]
  int x_stride;

  // Every pointer after the previous in `base`; returns the end.
  __device__ float* Layout(float* base, int dim) {
    x_stride = (dim | 1);  // odd: the two frame groups of a warp read different banks
    x = base;
    mean = x + kFrames * x_stride;
    inv_var = mean + kGauss * dim;
    log_norm = inv_var + kGauss * dim;
    return log_norm + kGauss;
  }
  static size_t Bytes(int dim) {
    return sizeof(float) * (size_t(kFrames) * size_t(dim | 1) + 2 * size_t(kGauss) * dim + kGauss);
  }

  __device__ void LoadFrames(const float* feats, int first, int count, int dim) {
    for (int i = threadIdx.x; i < kFrames * dim; i += kThreads) {
      const int t = i / dim, d = i - t * dim;
      x[t * x_stride + d] = t < count ? feats[size_t(first + t) * dim + d] : 0.0f;
    }
  }
  __device__ void LoadGaussians(const EmModelView& m, int first) {
    for (int i = threadIdx.x; i < kGauss * m.dim; i += kThreads) {
      const int k = i / m.dim, d = i - k * m.dim;
      mean[d * kGauss + k] = m.mean[size_t(first + k) * m.dim + d];
      inv_var[d * kGauss + k] = m.inv_var[size_t(first + k) * m.dim + d];
    }
    for (int k = threadIdx.x; k < kGauss; k += kThreads) log_norm[k] = m.log_norm[first + k];
  }

  // ll of the thread's 4 x 4 (frame, Gaussian) pairs: frames ty + i kFrames/4, Gaussians
  // tx + j kGauss/4, with tx, ty from the thread index.
  __device__ void LogLikes(int dim, float (&ll)[4][4]) const {
    constexpr int kTx = kGauss / 4, kTy = kFrames / 4;
    const int tx = threadIdx.x % kTx, ty = threadIdx.x / kTx;
    float quad[4][4] = {};
    for (int d = 0; d < dim; ++d) {
      float xv[4], mv[4], iv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) xv[i] = x[(ty + i * kTy) * x_stride + d];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        mv[j] = mean[d * kGauss + tx + j * kTx];
        iv[j] = inv_var[d * kGauss + tx + j * kTx];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const float diff = xv[i] - mv[j];
          quad[i][j] = fmaf(diff * diff, iv[j], quad[i][j]);
        }
      }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
      for (int j = 0; j < 4; ++j) ll[i][j] = fmaf(-0.5f, quad[i][j], log_norm[tx + j * kTx]);
    }
  }
};

template <int kGauss, int kFrames>
__global__ void __launch_bounds__(kThreads)
    FrameLogLikesKernel(EmModelView model, const float* __restrict__ feats, int num_frames,
                        float* __restrict__ lse, double* total_log_like) {
  extern __shared__ float smem[];
  Tiles<kGauss, kFrames> tiles;
  tiles.Layout(smem, model.dim);
  const int first = blockIdx.x * kFrames;
  const int count = min(kFrames, num_frames - first);
  tiles.LoadFrames(feats, first, count, model.dim);
  LogSum sums[4];
  for (int g0 = 0; g0 < model.num_gauss; g0 += kGauss) {
    __syncthreads();
    tiles.LoadGaussians(model, g0);
    __syncthreads();
    float ll[4][4];
    tiles.LogLikes(model.dim, ll);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float m = fmaxf(fmaxf(ll[i][0], ll[i][1]), fmaxf(ll[i][2], ll[i][3]));
      if (m == -INFINITY) continue;
      float s = 0.0f;
#pragma unroll
      for (int j = 0; j < 4; ++j) s += expf(ll[i][j] - m);
      sums[i].Add(m, s);
    }
  }
  // The kGauss / 4 threads of a frame group are adjacent lanes of one warp.
  constexpr int kTx = kGauss / 4, kTy = kFrames / 4;
  double block_sum = 0.0;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    for (int offset = kTx / 2; offset > 0; offset /= 2) {
      const float m = __shfl_xor_sync(0xffffffffu, sums[i].max, offset);
      const float s = __shfl_xor_sync(0xffffffffu, sums[i].sum, offset);
      sums[i].Add(m, s);
    }
    const int t = threadIdx.x / kTx + i * kTy;
    if (threadIdx.x % kTx == 0 && t < count) {
      const float v = sums[i].Log();
      lse[first + t] = v;
      block_sum += v;
    }
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    block_sum += __shfl_xor_sync(0xffffffffu, block_sum, offset);
  }
  if (threadIdx.x % 32 == 0 && total_log_like != nullptr) atomicAdd(total_log_like, block_sum);
}

template <int kGauss, int kFrames>
size_t StatisticsSharedBytes(int dim) {
  return Tiles<kGauss, kFrames>::Bytes(dim) + sizeof(float) * (kFrames + kFrames * kGauss) +
         sizeof(double) * (2 * size_t(kGauss) * dim + kGauss) + 16;
}

template <int kGauss, int kFrames>
__global__ void __launch_bounds__(kThreads)
    StatisticsKernel(EmModelView model, const float* __restrict__ feats,
                     const float* __restrict__ lse, int num_frames, int frames_per_split,
                     EmStatsView stats) {
  extern __shared__ float smem[];
  Tiles<kGauss, kFrames> tiles;
  const int dim = model.dim;
  float* lse_s = tiles.Layout(smem, dim);
  float* gamma = lse_s + kFrames;  // [kFrames][kGauss]
  // Doubles on an 8-byte boundary.
  double* acc = reinterpret_cast<double*>(
      (reinterpret_cast<uintptr_t>(gamma + kFrames * kGauss) + 15) & ~uintptr_t{15});
  double* acc1 = acc;                          // [dim][kGauss]
  double* acc2 = acc1 + size_t(dim) * kGauss;  // [dim][kGauss]
  double* occ = acc2 + size_t(dim) * kGauss;   // [kGauss]
  const int g0 = blockIdx.x * kGauss;
  tiles.LoadGaussians(model, g0);
  for (int i = threadIdx.x; i < 2 * dim * kGauss + kGauss; i += kThreads) acc[i] = 0.0;
  const int begin = blockIdx.y * frames_per_split;
  const int end = min(num_frames, begin + frames_per_split);
  // The accumulation's micro-tiles: 4 Gaussians (k, interleaved: conflict-free) x 4 dimensions.
  constexpr int kMk = kGauss / 4;
  const int dim_tiles = (dim + 3) / 4;
  constexpr int kTx = kGauss / 4, kTy = kFrames / 4;
  for (int first = begin; first < end; first += kFrames) {
    const int count = min(kFrames, end - first);
    __syncthreads();
    tiles.LoadFrames(feats, first, count, dim);
    for (int t = threadIdx.x; t < kFrames; t += kThreads) {
      lse_s[t] = t < count ? lse[first + t] : INFINITY;  // no posterior beyond the chunk
    }
    __syncthreads();
    {
      float ll[4][4];
      tiles.LogLikes(dim, ll);
      const int tx = threadIdx.x % kTx, ty = threadIdx.x / kTx;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int t = ty + i * kTy;
#pragma unroll
        for (int j = 0; j < 4; ++j) gamma[t * kGauss + tx + j * kTx] = expf(ll[i][j] - lse_s[t]);
      }
    }
    __syncthreads();
    for (int m = threadIdx.x; m < kMk * dim_tiles; m += kThreads) {
      const int mk = m % kMk, d0 = (m / kMk) * 4;
      float mu[4][4], s1[4][4] = {}, s2[4][4] = {};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int d = min(d0 + j, dim - 1);
          mu[i][j] = tiles.mean[d * kGauss + mk + i * kMk];
        }
      }
      for (int t = 0; t < kFrames; ++t) {
        float g[4], xv[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) g[i] = gamma[t * kGauss + mk + i * kMk];
#pragma unroll
        for (int j = 0; j < 4; ++j) xv[j] = tiles.x[t * tiles.x_stride + min(d0 + j, dim - 1)];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const float y = xv[j] - mu[i][j];
            const float gy = g[i] * y;
            s1[i][j] += gy;
            s2[i][j] = fmaf(gy, y, s2[i][j]);
          }
        }
      }
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        if (d0 + j >= dim) break;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int p = (d0 + j) * kGauss + mk + i * kMk;
          acc1[p] += s1[i][j];
          acc2[p] += s2[i][j];
        }
      }
    }
    for (int k = threadIdx.x; k < kGauss; k += kThreads) {
      float o = 0.0f;
      for (int t = 0; t < kFrames; ++t) o += gamma[t * kGauss + k];
      occ[k] += o;
    }
  }
  __syncthreads();
  for (int p = threadIdx.x; p < dim * kGauss; p += kThreads) {
    const int d = p / kGauss, k = p - d * kGauss;
    const size_t out = size_t(g0 + k) * dim + d;
    atomicAdd(&stats.s1[out], acc1[p]);
    atomicAdd(&stats.s2[out], acc2[p]);
  }
  for (int k = threadIdx.x; k < kGauss; k += kThreads) atomicAdd(&stats.occ[g0 + k], occ[k]);
}

// The tile shapes by dimension: 64 Gaussians x 64 frames up to 64 dimensions, 32 x 128 above.
template <typename Launch>
absl::Status ForDim(int dim, Launch&& launch) {
  if (dim < 1 || dim > kMaxEmDim) {
    return absl::InvalidArgumentError(
        absl::StrCat("the GPU statistics take dimensions 1 to ", kMaxEmDim, ", not ", dim));
  }
  if (dim <= 64)
    return launch(std::integral_constant<int, 64>{}, std::integral_constant<int, 64>{});
  return launch(std::integral_constant<int, 32>{}, std::integral_constant<int, 128>{});
}

}  // namespace

absl::Status EmFrameLogLikes(const EmModelView& model, const float* feats, int32_t num_frames,
                             float* lse, double* total_log_like, cudaStream_t stream) {
  if (num_frames == 0) return absl::OkStatus();
  return ForDim(model.dim, [&](auto gauss, auto frames) -> absl::Status {
    constexpr int kGauss = decltype(gauss)::value, kFrames = decltype(frames)::value;
    const size_t bytes = Tiles<kGauss, kFrames>::Bytes(model.dim);
    auto kernel = FrameLogLikesKernel<kGauss, kFrames>;
    GMM_CUDA_RETURN_IF_ERROR(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
    const unsigned blocks = unsigned((num_frames + kFrames - 1) / kFrames);
    kernel<<<blocks, kThreads, bytes, stream>>>(model, feats, num_frames, lse, total_log_like);
    GMM_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return absl::OkStatus();
  });
}

absl::Status EmStatistics(const EmModelView& model, const float* feats, const float* lse,
                          int32_t num_frames, int32_t splits, const EmStatsView& stats,
                          cudaStream_t stream) {
  if (num_frames == 0) return absl::OkStatus();
  return ForDim(model.dim, [&](auto gauss, auto frames) -> absl::Status {
    constexpr int kGauss = decltype(gauss)::value, kFrames = decltype(frames)::value;
    const size_t bytes = StatisticsSharedBytes<kGauss, kFrames>(model.dim);
    auto kernel = StatisticsKernel<kGauss, kFrames>;
    GMM_CUDA_RETURN_IF_ERROR(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
    const int s = std::max(1, std::min<int>(splits, (num_frames + kFrames - 1) / kFrames));
    // Whole tiles per split, so that only the last tile of a split is partial.
    const int per_split = ((num_frames + s - 1) / s + kFrames - 1) / kFrames * kFrames;
    const dim3 grid(unsigned(model.num_gauss / kGauss),
                    unsigned((num_frames + per_split - 1) / per_split));
    kernel<<<grid, kThreads, bytes, stream>>>(model, feats, lse, num_frames, per_split, stats);
    GMM_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return absl::OkStatus();
  });
}

}  // namespace gmmscore

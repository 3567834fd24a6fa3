#include "bench/cuda/two_kernel_kernels.h"
#include "kernels/cuda/common/cuda_status.h"

namespace gmmscore {
namespace {

constexpr int kThreads = 256;

__global__ void ExpandFramesKernel(const float* __restrict__ feats, const float* __restrict__ shift,
                                   int32_t frames, int32_t dim, float* __restrict__ expanded) {
  const int32_t rows = 2 * dim + 1;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= int64_t(frames) * rows) return;
  const int64_t t = i / rows;
  const int32_t k = static_cast<int32_t>(i - t * rows);
  float value = 1.0f;
  if (k > 0) {
    const int32_t d = (k - 1) % dim;
    const float x = feats[t * dim + d] - shift[d];
    value = k <= dim ? x : x * x;
  }
  expanded[i] = value;
}

// One warp per (state, frame); consecutive warps take consecutive states of a frame, so the
// block reads one stretch of the frame's column.
__global__ void LogAddStatesKernel(const float* __restrict__ gauss_scores, int64_t num_gauss,
                                   const uint32_t* __restrict__ gauss_begin, int32_t num_states,
                                   int32_t frames, float* __restrict__ out) {
  const int64_t warp = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int32_t lane = threadIdx.x % 32;
  if (warp >= int64_t(num_states) * frames) return;  // the whole warp leaves together
  const int32_t state = static_cast<int32_t>(warp % num_states);
  const int64_t t = warp / num_states;
  const float* column = gauss_scores + t * num_gauss;
  const uint32_t begin = gauss_begin[state];
  const uint32_t end = gauss_begin[state + 1];
  float best = -INFINITY;
  for (uint32_t g = begin + lane; g < end; g += 32) best = fmaxf(best, column[g]);
  for (int offset = 16; offset > 0; offset /= 2) {
    best = fmaxf(best, __shfl_xor_sync(0xffffffffu, best, offset));
  }
  float sum = 0.0f;
  for (uint32_t g = begin + lane; g < end; g += 32) sum += __expf(column[g] - best);
  for (int offset = 16; offset > 0; offset /= 2) {
    sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  }
  if (lane == 0) out[t * num_states + state] = best + __logf(sum);
}

uint32_t Blocks(int64_t threads) {
  return static_cast<uint32_t>((threads + kThreads - 1) / kThreads);
}

}  // namespace

absl::Status LaunchExpandFrames(const float* feats, const float* shift, int32_t frames, int32_t dim,
                                float* expanded, cudaStream_t stream) {
  ExpandFramesKernel<<<Blocks(int64_t(frames) * (2 * dim + 1)), kThreads, 0, stream>>>(
      feats, shift, frames, dim, expanded);
  return CudaStatus(cudaGetLastError(), "ExpandFramesKernel launch");
}

absl::Status LaunchLogAddStates(const float* gauss_scores, int64_t num_gauss,
                                const uint32_t* gauss_begin, int32_t num_states, int32_t frames,
                                float* out, cudaStream_t stream) {
  LogAddStatesKernel<<<Blocks(int64_t(num_states) * frames * 32), kThreads, 0, stream>>>(
      gauss_scores, num_gauss, gauss_begin, num_states, frames, out);
  return CudaStatus(cudaGetLastError(), "LogAddStatesKernel launch");
}

}  // namespace gmmscore

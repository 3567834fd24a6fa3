#include <cuda_fp16.h>

#include <cmath>

#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/encode16_kernel.h"

namespace gmmscore {
namespace {

constexpr int32_t kThreads = 256;
constexpr int32_t kWarps = kThreads / 32;

// Of two candidates the larger score, the lower state on a tie: the first of the largest.
__device__ void Better(float& value, int32_t& index, float other_value, int32_t other_index) {
  if (other_value > value || (other_value == value && other_index < index)) {
    value = other_value;
    index = other_index;
  }
}

// One block per frame: the row's best (a block reduction), then the row encoded.
__global__ void __launch_bounds__(kThreads)
    Encode16Kernel(const float* __restrict__ scores, const int32_t states,
                   const DeviceEncoding16* __restrict__ modes, uint16_t* __restrict__ encoded,
                   float* __restrict__ best_score, int32_t* __restrict__ best_state) {
  __shared__ float warp_value[kWarps];
  __shared__ int32_t warp_index[kWarps];
  __shared__ int32_t any_nan;
  const int32_t t = blockIdx.x;
  const DeviceEncoding16 mode = modes[t];
  if (mode == DeviceEncoding16::kNone) return;
  const float* row = scores + int64_t(t) * states;
  if (threadIdx.x == 0) any_nan = 0;
  __syncthreads();
  float value = -INFINITY;
  int32_t index = states;  // past the end: loses every tie
  bool nan = false;
  for (int32_t s = threadIdx.x; s < states; s += kThreads) {
    const float v = row[s];
    nan = nan || isnan(v);
    Better(value, index, v, s);
  }
  if (nan) any_nan = 1;
  for (int32_t offset = 16; offset > 0; offset /= 2) {
    Better(value, index, __shfl_down_sync(0xffffffffu, value, offset),
           __shfl_down_sync(0xffffffffu, index, offset));
  }
  const int32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    warp_value[warp] = value;
    warp_index[warp] = index;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int32_t w = 1; w < kWarps; ++w) Better(value, index, warp_value[w], warp_index[w]);
    // A row of -inf only: every score ties, the first state is the best, as on the host.
    if (index >= states) index = 0;
    warp_value[0] = row[index];
    warp_index[0] = any_nan ? -1 : index;
    best_score[t] = row[index];
    best_state[t] = warp_index[0];
  }
  __syncthreads();
  if (warp_index[0] < 0) return;
  const float best = warp_value[0];
  uint16_t* out = encoded + int64_t(t) * states;
  if (mode == DeviceEncoding16::kFloat16) {
    for (int32_t s = threadIdx.x; s < states; s += kThreads) {
      out[s] = __half_as_ushort(__float2half_rn(row[s]));
    }
    return;
  }
  for (int32_t s = threadIdx.x; s < states; s += kThreads) {
    // The host's steps, each rounded alone (no contraction): (best - v) * 256, saturated at or
    // past 65534.5 (an infinite difference too), else max(0, .) + 0.5 truncated.
    const float below = __fmul_rn(__fsub_rn(best, row[s]), 256.0f);
    out[s] = below < 65534.5f ? uint16_t(__float2uint_rz(__fadd_rn(fmaxf(below, 0.0f), 0.5f)))
                              : uint16_t(65535);
  }
}

}  // namespace

absl::Status LaunchEncode16(const float* scores, int32_t frames, int32_t states,
                            const DeviceEncoding16* modes, uint16_t* encoded, float* best_score,
                            int32_t* best_state, cudaStream_t stream) {
  if (frames < 0 || states < 1) {
    return absl::InvalidArgumentError("encoding a batch of no states or negative frames");
  }
  if (frames == 0) return absl::OkStatus();
  Encode16Kernel<<<static_cast<uint32_t>(frames), kThreads, 0, stream>>>(
      scores, states, modes, encoded, best_score, best_state);
  return CudaStatus(cudaGetLastError(), "Encode16Kernel launch");
}

}  // namespace gmmscore

#include <cmath>

#include "kernels/cuda/common/cuda_status.h"
#include "kernels/cuda/score/fusion_kernels.h"

namespace gmmscore {
namespace {

constexpr int32_t kThreads = 256;
constexpr int32_t kWarps = kThreads / 32;
// Frames of a select scan staged in shared memory at a time: their best-state scores and the
// scores that leave the window as they enter it.
constexpr int32_t kScanTile = 256;

// Block (x, y): states [x * kThreads, (x + 1) * kThreads) of frame y. Each rule in the order and
// precision of FuseScores (kernels/fusion.cc): max as std::max does it, the sums in double. The
// weights are read from the segment in global memory: a local copy indexed by k would live in
// local memory.
__global__ void __launch_bounds__(kThreads)
    FuseElementwiseKernel(const float* __restrict__ scores, const int32_t models,
                          const int32_t frames, const int32_t states,
                          const DeviceFusionSegment* __restrict__ segments,
                          const int32_t* __restrict__ frame_segment, float* __restrict__ out) {
  const int32_t t = blockIdx.y;
  const int32_t s = blockIdx.x * kThreads + threadIdx.x;
  const int32_t index = frame_segment[t];
  if (s >= states || index < 0) return;
  const DeviceFusionSegment* segment = segments + index;
  const int64_t stride = int64_t(frames) * states;
  const float* x = scores + int64_t(t) * states + s;
  float fused = 0.0f;
  switch (segment->rule) {
    case DeviceFusionRule::kMax: {
      float best = x[0];
      for (int32_t k = 1; k < models; ++k) {
        const float v = x[k * stride];
        best = best < v ? v : best;
      }
      fused = best;
      break;
    }
    case DeviceFusionRule::kLogLinear: {
      // double(w) * double(x) is exact, so a fused multiply-add rounds as the host's two steps.
      double sum = 0.0;
      for (int32_t k = 0; k < models; ++k)
        sum += double(segment->weights[k]) * double(x[k * stride]);
      fused = float(sum);
      break;
    }
    case DeviceFusionRule::kLogAdd: {
      double best = -INFINITY;
      for (int32_t k = 0; k < models; ++k) {
        const double v = x[k * stride];
        if (segment->weights[k] > 0.0f) best = best < v ? v : best;
      }
      double sum = 0.0;
      for (int32_t k = 0; k < models; ++k) {
        sum += double(segment->weights[k]) * exp(double(x[k * stride]) - best);
      }
      fused = float(best + log(sum));
      break;
    }
  }
  out[int64_t(t) * states + s] = fused;
}

// Block (t, k): the best score of model k at frame t.
__global__ void __launch_bounds__(kThreads)
    FrameBestKernel(const float* __restrict__ scores, const int32_t frames, const int32_t states,
                    float* __restrict__ frame_best) {
  __shared__ float warp_best[kWarps];
  const int32_t t = blockIdx.x;
  const int32_t k = blockIdx.y;
  const float* row = scores + (int64_t(k) * frames + t) * states;
  float best = -INFINITY;
  for (int32_t s = threadIdx.x; s < states; s += kThreads) best = fmaxf(best, row[s]);
  for (int32_t offset = 16; offset > 0; offset >>= 1) {
    best = fmaxf(best, __shfl_xor_sync(0xffffffffu, best, offset));
  }
  if (threadIdx.x % 32 == 0) warp_best[threadIdx.x / 32] = best;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int32_t w = 1; w < kWarps; ++w) best = fmaxf(best, warp_best[w]);
    frame_best[int64_t(k) * frames + t] = best;
  }
}

// One block. Thread k < models runs model k's sum through the frames in order, the arithmetic of
// SelectTracker::Next (add the frame, subtract the one that left once the window is full); the
// block stages each tile's operands in shared memory first so that the sequential loop reads no
// global memory. Frames leaving the window come from this batch's frame_best or, for the first
// `window` frames, from the ring of earlier batches, which is rewritten at the end.
__global__ void __launch_bounds__(kThreads)
    SelectScanKernel(const float* __restrict__ frame_best, const int32_t models,
                     const int32_t frames, const DeviceSelectState state, const int64_t frames_seen,
                     double* __restrict__ window_sums) {
  __shared__ float entering[kMaxFusedModels][kScanTile];
  __shared__ double leaving[kMaxFusedModels][kScanTile];
  const int32_t window = state.window;
  const bool scans = threadIdx.x < models;
  double sum = scans ? state.sums[threadIdx.x] : 0.0;
  for (int32_t first = 0; first < frames; first += kScanTile) {
    const int32_t n = min(kScanTile, frames - first);
    for (int32_t i = threadIdx.x; i < models * kScanTile; i += kThreads) {
      const int32_t k = i / kScanTile;
      const int32_t j = i - k * kScanTile;
      if (j >= n) continue;
      const int32_t t = first + j;
      const int64_t position = frames_seen + t;
      entering[k][j] = frame_best[int64_t(k) * frames + t];
      double gone = 0.0;  // read only once the window is full
      if (position >= window) {
        gone = t >= window ? double(frame_best[int64_t(k) * frames + t - window])
                           : state.recent[int64_t(k) * window + position % window];
      }
      leaving[k][j] = gone;
    }
    __syncthreads();
    if (scans) {
      const int32_t k = threadIdx.x;
      for (int32_t j = 0; j < n; ++j) {
        sum += entering[k][j];
        if (frames_seen + first + j >= window) sum -= leaving[k][j];
        window_sums[int64_t(k) * frames + first + j] = sum;
      }
    }
    __syncthreads();
  }
  if (scans) state.sums[threadIdx.x] = sum;
  // The ring keeps the last `window` frames of the sequence.
  const int32_t kept = min(window, frames);
  for (int32_t i = threadIdx.x; i < models * kept; i += kThreads) {
    const int32_t k = i / kept;
    const int32_t t = frames - kept + (i - k * kept);
    state.recent[int64_t(k) * window + (frames_seen + t) % window] =
        frame_best[int64_t(k) * frames + t];
  }
}

// Block (x, y): frame y's states [x * kThreads, ...) copied from the model with the highest
// windowed sum, the first on a tie (SelectTracker::Next's comparison).
__global__ void __launch_bounds__(kThreads)
    SelectGatherKernel(const float* __restrict__ scores, const int32_t models, const int32_t frames,
                       const int32_t states, const double* __restrict__ window_sums,
                       float* __restrict__ out) {
  const int32_t t = blockIdx.y;
  const int32_t s = blockIdx.x * kThreads + threadIdx.x;
  if (s >= states) return;
  int32_t best = 0;
  double best_sum = window_sums[t];
  for (int32_t k = 1; k < models; ++k) {
    const double sum = window_sums[int64_t(k) * frames + t];
    if (sum > best_sum) {
      best = k;
      best_sum = sum;
    }
  }
  out[int64_t(t) * states + s] = scores[(int64_t(best) * frames + t) * states + s];
}

absl::Status CheckShape(int32_t models, int32_t frames, int32_t states) {
  if (models < 1 || models > kMaxFusedModels || frames < 0 || frames > 65535 || states < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("no fusion of ", models, " models x ", frames, " frames x ", states,
                     " states on the device (1 to ", kMaxFusedModels, " models, 65535 frames)"));
  }
  return absl::OkStatus();
}

dim3 StateGrid(int32_t frames, int32_t states) {
  return dim3(static_cast<uint32_t>((states + kThreads - 1) / kThreads),
              static_cast<uint32_t>(frames));
}

}  // namespace

absl::Status LaunchFuseElementwise(const float* scores, int32_t models, int32_t frames,
                                   int32_t states, const DeviceFusionSegment* segments,
                                   const int32_t* frame_segment, float* out, cudaStream_t stream) {
  GMM_RETURN_IF_ERROR(CheckShape(models, frames, states));
  if (frames == 0) return absl::OkStatus();
  FuseElementwiseKernel<<<StateGrid(frames, states), kThreads, 0, stream>>>(
      scores, models, frames, states, segments, frame_segment, out);
  return CudaStatus(cudaGetLastError(), "FuseElementwiseKernel launch");
}

absl::Status LaunchSelect(const float* scores, int32_t models, int32_t frames, int32_t states,
                          const DeviceSelectState& state, int64_t frames_seen, float* frame_best,
                          double* window_sums, float* out, cudaStream_t stream) {
  GMM_RETURN_IF_ERROR(CheckShape(models, frames, states));
  if (state.window < 1) return absl::InvalidArgumentError("the select window must be >= 1 frame");
  if (frames == 0) return absl::OkStatus();
  FrameBestKernel<<<dim3(static_cast<uint32_t>(frames), static_cast<uint32_t>(models)), kThreads, 0,
                    stream>>>(scores, frames, states, frame_best);
  GMM_RETURN_IF_ERROR(CudaStatus(cudaGetLastError(), "FrameBestKernel launch"));
  SelectScanKernel<<<1, kThreads, 0, stream>>>(frame_best, models, frames, state, frames_seen,
                                               window_sums);
  GMM_RETURN_IF_ERROR(CudaStatus(cudaGetLastError(), "SelectScanKernel launch"));
  SelectGatherKernel<<<StateGrid(frames, states), kThreads, 0, stream>>>(scores, models, frames,
                                                                         states, window_sums, out);
  return CudaStatus(cudaGetLastError(), "SelectGatherKernel launch");
}

}  // namespace gmmscore

#include <cuda_fp16.h>

#include <cmath>

#include "kernels/cuda/common/cuda_status.h"
#include "kernels/cuda/score/encode_rows_kernel.h"

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

// The kept states of a row, in state order: a block-wide compaction over tiles of kThreads
// states (a ballot and the warps' counts give each kept state its place). Stops once more than
// the capacity are kept; the count is then -1.
__device__ void SelectBeam(const float* __restrict__ row, const int32_t states, const float best,
                           const int32_t t, const DeviceBeamOutput beam) {
  __shared__ int32_t warp_kept[kWarps];
  __shared__ int32_t kept;
  const int32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // As the host: the threshold rounded once, then >= (a NaN is never kept).
  const float threshold = __fsub_rn(best, beam.beams[t]);
  float* const out_scores = beam.scores + int64_t(t) * beam.capacity;
  int32_t* const out_states = beam.states + int64_t(t) * beam.capacity;
  if (threadIdx.x == 0) kept = 0;
  __syncthreads();
  for (int32_t first = 0; first < states; first += kThreads) {
    const int32_t s = first + int32_t(threadIdx.x);
    const bool keep = s < states && row[s] >= threshold;
    const uint32_t ballot = __ballot_sync(0xffffffffu, keep);
    if (lane == 0) warp_kept[warp] = __popc(ballot);
    __syncthreads();
    int32_t at = kept + __popc(ballot & ((1u << lane) - 1u)), tile = 0;
    for (int32_t w = 0; w < kWarps; ++w) {
      at += w < warp ? warp_kept[w] : 0;
      tile += warp_kept[w];
    }
    if (keep && at < beam.capacity) {
      out_scores[at] = row[s];
      out_states[at] = s;
    }
    __syncthreads();  // every thread has read kept and warp_kept
    if (threadIdx.x == 0) kept += tile;
    __syncthreads();
    if (kept > beam.capacity) break;  // the same for the whole block
  }
  if (threadIdx.x == 0) beam.counts[t] = kept <= beam.capacity ? kept : -1;
}

// One block per frame: the row's best (a block reduction), then the row encoded.
__global__ void __launch_bounds__(kThreads)
    EncodeRowsKernel(const float* __restrict__ scores, const int32_t states,
                     const DeviceRowEncoding* __restrict__ modes, uint16_t* __restrict__ encoded,
                     float* __restrict__ best_score, int32_t* __restrict__ best_state,
                     const DeviceBeamOutput beam) {
  __shared__ float warp_value[kWarps];
  __shared__ int32_t warp_index[kWarps];
  __shared__ int32_t any_nan;
  const int32_t t = blockIdx.x;
  const DeviceRowEncoding mode = modes[t];
  // A frame asking for beam candidates with nowhere to put them is left alone, as kNone.
  if (mode == DeviceRowEncoding::kNone ||
      (mode == DeviceRowEncoding::kBeamSparse && beam.counts == nullptr)) {
    return;
  }
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
    if (mode == DeviceRowEncoding::kBeamSparse && any_nan) beam.counts[t] = -1;
  }
  __syncthreads();
  if (warp_index[0] < 0) return;
  const float best = warp_value[0];
  if (mode == DeviceRowEncoding::kBeamSparse) {
    SelectBeam(row, states, best, t, beam);
    return;
  }
  uint16_t* out = encoded + int64_t(t) * states;
  if (mode == DeviceRowEncoding::kFloat16) {
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

absl::Status LaunchEncodeRows(const float* scores, int32_t frames, int32_t states,
                              const DeviceRowEncoding* modes, uint16_t* encoded, float* best_score,
                              int32_t* best_state, const DeviceBeamOutput* beam,
                              cudaStream_t stream) {
  if (frames < 0 || states < 1) {
    return absl::InvalidArgumentError("encoding a batch of no states or negative frames");
  }
  if (beam != nullptr && (beam->capacity < 1 || beam->beams == nullptr || beam->scores == nullptr ||
                          beam->states == nullptr || beam->counts == nullptr)) {
    return absl::InvalidArgumentError("beam candidates with no room");
  }
  if (frames == 0) return absl::OkStatus();
  EncodeRowsKernel<<<static_cast<uint32_t>(frames), kThreads, 0, stream>>>(
      scores, states, modes, encoded, best_score, best_state,
      beam != nullptr ? *beam : DeviceBeamOutput{});
  return CudaStatus(cudaGetLastError(), "EncodeRowsKernel launch");
}

}  // namespace gmmscore

#include "kernels/cuda/common/cuda_status.h"
#include "kernels/cuda/common/log2_math.cuh"
#include "kernels/cuda/score/simt_model_view.h"  // kPadGconst
#include "kernels/cuda/score/split_combine.h"

namespace gmmscore {
namespace {

constexpr int32_t kCombineThreads = 256;

__global__ void CombineSplitsKernel(const float* __restrict__ partial, const int32_t splits,
                                    const int32_t num_frames, const int32_t num_slots,
                                    const int32_t* __restrict__ slot_state,
                                    const int32_t num_states, float* __restrict__ out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = int64_t(num_frames) * num_slots;
  if (i >= stride) return;
  const int64_t frame = i / num_slots;
  const int32_t state = slot_state[i - frame * num_slots];
  if (state < 0) return;
  float m = kPadGconst;
  for (int32_t split = 0; split < splits; ++split) m = fmaxf(m, partial[split * stride + i]);
  float sum = 0.0f;
  for (int32_t split = 0; split < splits; ++split) {
    sum += Exp2Approx(partial[split * stride + i] - m);
  }
  out[frame * num_states + state] = (m + Log2Approx(sum)) * kLn2;
}

}  // namespace

absl::Status CombineSplits(const float* partial, int32_t splits, int32_t num_frames,
                           int32_t num_slots, const int32_t* slot_state, int32_t num_states,
                           float* out, cudaStream_t stream) {
  const int64_t elements = int64_t(num_frames) * num_slots;
  if (elements == 0) return absl::OkStatus();
  CombineSplitsKernel<<<static_cast<uint32_t>((elements + kCombineThreads - 1) / kCombineThreads),
                        kCombineThreads, 0, stream>>>(partial, splits, num_frames, num_slots,
                                                      slot_state, num_states, out);
  return CudaStatus(cudaGetLastError(), "CombineSplitsKernel launch");
}

}  // namespace gmmscore

#include <cmath>

#include "bench/cuda/em_peer_kernels.h"
#include "kernels/cuda/common/cuda_status.h"

namespace gmmscore {
namespace {

__global__ void SquareKernel(const float* in, int64_t n, float* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    out[i] = in[i] * in[i];
  }
}

// One warp per frame: two passes over its column (max, then sum), a third writes posteriors.
__global__ void PosteriorKernel(float* matrix, const float* k, int32_t num_gauss, int32_t frames,
                                double* total_log_like) {
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (warp >= frames) return;
  float* column = matrix + size_t(warp) * num_gauss;
  float max = -INFINITY;
  for (int g = lane; g < num_gauss; g += 32) max = fmaxf(max, column[g] + k[g]);
  for (int offset = 16; offset > 0; offset /= 2) {
    max = fmaxf(max, __shfl_xor_sync(0xffffffffu, max, offset));
  }
  float sum = 0.0f;
  for (int g = lane; g < num_gauss; g += 32) sum += expf(column[g] + k[g] - max);
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  const float lse = max + logf(sum);
  for (int g = lane; g < num_gauss; g += 32) column[g] = expf(column[g] + k[g] - lse);
  if (lane == 0) atomicAdd(total_log_like, double(lse));
}

}  // namespace

absl::Status SquareValues(const float* in, int64_t n, float* out, cudaStream_t stream) {
  SquareKernel<<<1024, 256, 0, stream>>>(in, n, out);
  GMM_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

absl::Status PosteriorsInPlace(float* matrix, const float* k, int32_t num_gauss, int32_t frames,
                               double* total_log_like, cudaStream_t stream) {
  const int warps_per_block = 8;
  const unsigned blocks = unsigned((frames + warps_per_block - 1) / warps_per_block);
  PosteriorKernel<<<blocks, 32 * warps_per_block, 0, stream>>>(matrix, k, num_gauss, frames,
                                                               total_log_like);
  GMM_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

}  // namespace gmmscore

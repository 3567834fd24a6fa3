#include "bench/cuda/device_ceilings.h"
#include "bench/cuda/event_timing.h"
#include "kernels/cuda/cuda_buffers.h"
#include "kernels/cuda/cuda_status.h"

namespace gmmscore {
namespace {

constexpr int kChains = 8;  // independent FMA chains per thread: more than the FMA latency
constexpr int kIterations = 1 << 15;
constexpr int kThreads = 256;
constexpr int kRepeats = 5;  // timed runs, after one warm-up

__global__ void FmaChainsKernel(float seed, float* out) {
  float a[kChains];
#pragma unroll
  for (int j = 0; j < kChains; ++j) a[j] = seed + float(threadIdx.x + j);
  const float b = 0.999f * seed;
  const float c = 1e-3f * seed;
#pragma unroll 4
  for (int i = 0; i < kIterations; ++i) {
#pragma unroll
    for (int j = 0; j < kChains; ++j) a[j] = fmaf(a[j], b, c);
  }
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < kChains; ++j) sum += a[j];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;  // keeps the chains alive
}

}  // namespace

absl::StatusOr<DeviceCeilings> MeasureDeviceCeilings(cudaStream_t stream) {
  int device = 0;
  int multiprocessors = 0;
  GMM_CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
  GMM_CUDA_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  const int blocks = multiprocessors * 8;  // 64 warps per multiprocessor
  GMM_ASSIGN_OR_RETURN(DeviceArray<float> sink,
                       DeviceArray<float>::Allocate(size_t(blocks) * kThreads));
  const auto fma_chains = [&](int) {
    FmaChainsKernel<<<blocks, kThreads, 0, stream>>>(1.0001f, sink.get());
    return CudaStatus(cudaGetLastError(), "FmaChainsKernel launch");
  };
  GMM_ASSIGN_OR_RETURN(const double fma_ms, MedianMilliseconds(stream, 1, kRepeats, fma_chains));

  const size_t copy_bytes = size_t(1) << 30;
  GMM_ASSIGN_OR_RETURN(DeviceArray<char> from, DeviceArray<char>::Allocate(copy_bytes));
  GMM_ASSIGN_OR_RETURN(DeviceArray<char> to, DeviceArray<char>::Allocate(copy_bytes));
  GMM_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(from.get(), 0x5a, copy_bytes, stream));
  const auto copy = [&](int) {
    return CudaStatus(
        cudaMemcpyAsync(to.get(), from.get(), copy_bytes, cudaMemcpyDeviceToDevice, stream),
        "cudaMemcpyAsync");
  };
  GMM_ASSIGN_OR_RETURN(const double copy_ms, MedianMilliseconds(stream, 1, kRepeats, copy));
  DeviceCeilings ceilings;
  ceilings.fma_per_second = double(blocks) * kThreads * kChains * kIterations / (1e-3 * fma_ms);
  ceilings.copy_bytes_per_second = 2.0 * double(copy_bytes) / (1e-3 * copy_ms);
  return ceilings;
}

}  // namespace gmmscore

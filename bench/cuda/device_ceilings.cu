#include "bench/cuda/device_ceilings.h"
#include "kernels/cuda/common/cuda_buffers.h"
#include "kernels/cuda/common/cuda_status.h"
#include "kernels/cuda/common/event_timing.h"

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

// Independent mma.sync chains per warp: enough products in flight to cover the instruction's
// latency, so the loop runs at the tensor cores' issue rate.
constexpr int kMmaChains = 8;
constexpr int kMmaIterations = 1 << 13;
constexpr int kMmaThreads = 256;

template <bool kF16>
__global__ void MmaChainsKernel(uint32_t seed, float* out) {
  // Small operands (tf32 / half2 bit patterns of about 1e-3) keep the sums finite.
  const uint32_t word = kF16 ? 0x14191419u : 0x3a83126fu;
  const uint32_t a[4] = {word ^ (seed & 0xffu), word, word ^ threadIdx.x, word};
  const uint32_t b[2] = {word, word ^ (threadIdx.x & 0xffu)};
  float acc[kMmaChains][4] = {};
  for (int i = 0; i < kMmaIterations; ++i) {
#pragma unroll
    for (int j = 0; j < kMmaChains; ++j) {
      if constexpr (kF16) {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
            "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
            : "+f"(acc[j][0]), "+f"(acc[j][1]), "+f"(acc[j][2]), "+f"(acc[j][3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      } else {
        asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
            "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
            : "+f"(acc[j][0]), "+f"(acc[j][1]), "+f"(acc[j][2]), "+f"(acc[j][3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      }
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < kMmaChains; ++j) sum += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;  // keeps the chains alive
}

// Floating-point operations per second of MmaChainsKernel<kF16> over the whole device.
template <bool kF16>
absl::StatusOr<double> MeasureMma(cudaStream_t stream, int multiprocessors) {
  const int blocks = multiprocessors * 4;  // 32 warps per multiprocessor
  GMM_ASSIGN_OR_RETURN(DeviceArray<float> sink,
                       DeviceArray<float>::Allocate(size_t(blocks) * kMmaThreads));
  const auto mma_chains = [&](int) {
    MmaChainsKernel<kF16><<<blocks, kMmaThreads, 0, stream>>>(7u, sink.get());
    return CudaStatus(cudaGetLastError(), "MmaChainsKernel launch");
  };
  GMM_ASSIGN_OR_RETURN(const double ms, MedianMilliseconds(stream, 1, kRepeats, mma_chains));
  const double flops_per_mma = 2.0 * 16 * 8 * (kF16 ? 16 : 8);
  return double(blocks) * (kMmaThreads / 32) * kMmaChains * kMmaIterations * flops_per_mma /
         (1e-3 * ms);
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
  GMM_ASSIGN_OR_RETURN(ceilings.tf32_flops, MeasureMma<false>(stream, multiprocessors));
  GMM_ASSIGN_OR_RETURN(ceilings.f16_flops, MeasureMma<true>(stream, multiprocessors));
  ceilings.copy_bytes_per_second = 2.0 * double(copy_bytes) / (1e-3 * copy_ms);
  return ceilings;
}

}  // namespace gmmscore

// Half-precision tensor-core helpers shared by the kernels that run mma.sync m16n8k16 products in
// float32 accuracy by splitting scaled operands (tensor_f16_kernel.cu, em_tensor_kernel.cu; the
// split is described in tensor_f16_kernel.h, the host's half in f16_split.h).
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cuda/score/tensor_model_view.h"  // kTensorF16LowScale

namespace gmmscore {

// a and b as a half2 register, a in the low half (the lower k of a fragment's pair).
__device__ __forceinline__ uint32_t PackHalf2(float a, float b) {
  const __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<const uint32_t*>(&h);
}

// The split of a scaled operand pair: hi = half(a), lo = half((a - hi) 2^11).
__device__ __forceinline__ void SplitF16(float a, float b, uint32_t& hi, uint32_t& lo) {
  hi = PackHalf2(a, b);
  const float2 h = __half22float2(*reinterpret_cast<const __half2*>(&hi));
  lo = PackHalf2((a - h.x) * kTensorF16LowScale, (b - h.y) * kTensorF16LowScale);
}

// d += a . b, m16n8k16, half operands, float accumulators (PTX ISA fragment layouts: lane
// = 4 s + t holds a0 = A[s][2t, 2t + 1], a1 = A[s + 8][2t, 2t + 1], a2 and a3 the same at
// k + 8; b0 = B[2t, 2t + 1][s], b1 the same at k + 8; d = D[s][2t], D[s][2t + 1], D[s + 8][2t],
// D[s + 8][2t + 1]).
__device__ __forceinline__ void MmaF16(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                       uint32_t a3, uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void MmaF16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                       uint32_t b1) {
  MmaF16(d, a[0], a[1], a[2], a[3], b0, b1);
}

// d = a . b (an accumulator that starts from zero, without registers to zero first).
__device__ __forceinline__ void MmaF16From0(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                            uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%10, %10, %10, %10};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(0.0f));
}

// The same with k = 8: a0, a1 and b0 alone.
__device__ __forceinline__ void MmaF16K8(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t b0) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(b0));
}

// 2^e as a float, for |e| <= 126.
__device__ __forceinline__ float PowerOfTwo(int32_t e) { return __int_as_float((127 + e) << 23); }

// The e that puts a frame's largest scaled operand in [2^14, 2^15), below half precision's
// largest value after rounding (0 for a row of zeros); the frame's operands are multiplied by
// 2^-e and its products by 2^e.
__device__ __forceinline__ int32_t FrameExponent(float largest) {
  return largest > 0.0f ? max(-100, min(100, ilogbf(largest) - 14)) : 0;
}

}  // namespace gmmscore

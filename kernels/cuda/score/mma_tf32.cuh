// TF32 tensor-core helpers shared by the kernels that run mma.sync m16n8k8 products in float32
// accuracy by splitting operands (tensor_kernel.cu, em_tensor_kernel.cu).
#pragma once

#include <cstdint>

namespace gmmscore {

// hi = x rounded to TF32 (nearest, ties away: cvt.rna.tf32.f32 without its NaN handling, which
// finite operands never need), lo = x - hi, exact in float32; the tensor cores read lo's top 19
// bits. a.b = hi.hi + hi.lo + lo.hi to float32 rounding (the lo.lo term is below it).
__device__ __forceinline__ void SplitTf32(float x, uint32_t& hi, uint32_t& lo) {
  hi = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
  lo = __float_as_uint(x - __uint_as_float(hi));
}

// d += a . b for one m16n8k8 tile (PTX ISA fragment layouts: lane = 4 s + t holds a = A[s][t],
// A[s + 8][t], A[s][t + 4], A[s + 8][t + 4]; b = B[t][s], B[t + 4][s]; d = D[s][2t], D[s][2t + 1],
// D[s + 8][2t], D[s + 8][2t + 1]).
__device__ __forceinline__ void MmaTf32(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                        uint32_t b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// d = a . b (an accumulator that starts from zero, without registers to zero first).
__device__ __forceinline__ void MmaTf32From0(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%10, %10, %10, %10};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(0.0f));
}

}  // namespace gmmscore

// Base-2 log-domain helpers shared by the scoring kernels and the tensor-core E-step. The layouts
// pre-scale u, v and K by log2(e), so the kernels log-add with the hardware's approximate
// exp2/log2 (one MUFU instruction each, relative error ~2^-22) and multiply by ln 2 once on
// output.
#pragma once

namespace gmmscore {

constexpr float kLn2 = 0.6931471805599453f;
constexpr double kLn2Double = 0.6931471805599453;
constexpr double kLog2eDouble = 1.4426950408889634;

__device__ __forceinline__ float Exp2Approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float Log2Approx(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace gmmscore

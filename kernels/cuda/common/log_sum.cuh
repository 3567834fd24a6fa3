// A running log-sum as (max, sum): log sum_i exp(v_i) = max + log(sum_i exp(v_i - max)), merged
// pairwise, so that partial log-sums over frames' Gaussians combine across lanes, warps and
// blocks. Shared by the EM kernels (em_stats_kernel.cu, em_tensor_kernel.cu).
#pragma once

#include <cmath>

namespace gmmscore {

// Base e (LogSum), or base 2 (LogSum2: values in log2 units, as the tensor-core E-step keeps
// them).
template <bool kBase2>
struct BasicLogSum {
  float max = -INFINITY;  // -inf: empty
  float sum = 0.0f;

  static __device__ __forceinline__ float Exp(float x) { return kBase2 ? exp2f(x) : expf(x); }
  __device__ __forceinline__ void Add(float m, float s) {
    if (m == -INFINITY) return;
    if (m > max) {
      sum = (max == -INFINITY ? 0.0f : sum * Exp(max - m)) + s;
      max = m;
    } else {
      sum += s * Exp(m - max);
    }
  }
  __device__ __forceinline__ float Log() const {
    return max == -INFINITY ? -INFINITY : max + (kBase2 ? log2f(sum) : logf(sum));
  }
};
using LogSum = BasicLogSum<false>;
using LogSum2 = BasicLogSum<true>;

}  // namespace gmmscore

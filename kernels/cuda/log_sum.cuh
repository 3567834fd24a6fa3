// A running log-sum as (max, sum): log sum_i exp(v_i) = max + log(sum_i exp(v_i - max)), merged
// pairwise, so that partial log-sums over frames' Gaussians combine across lanes, warps and
// blocks. Shared by the EM kernels (em_stats_kernel.cu, em_tensor_kernel.cu).
#pragma once

#include <cmath>

namespace gmmscore {

struct LogSum {
  float max = -INFINITY;  // -inf: empty
  float sum = 0.0f;

  __device__ __forceinline__ void Add(float m, float s) {
    if (m == -INFINITY) return;
    if (m > max) {
      sum = (max == -INFINITY ? 0.0f : sum * expf(max - m)) + s;
      max = m;
    } else {
      sum += s * expf(m - max);
    }
  }
  __device__ __forceinline__ float Log() const {
    return max == -INFINITY ? -INFINITY : max + logf(sum);
  }
};

}  // namespace gmmscore

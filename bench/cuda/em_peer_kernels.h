// The elementwise kernels of the cuBLAS EM peer (cublas_em_peer.h). C++17.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"

namespace gmmscore {

// out[i] = in[i]^2 for n values.
absl::Status SquareValues(const float* in, int64_t n, float* out, cudaStream_t stream);

// matrix: column-major num_gauss x frames of u . x + v . x^2. Per frame (column): adds k, takes
// the log-sum-exp (added to *total_log_like) and replaces the column by the posteriors.
absl::Status PosteriorsInPlace(float* matrix, const float* k, int32_t num_gauss, int32_t frames,
                               double* total_log_like, cudaStream_t stream);

}  // namespace gmmscore

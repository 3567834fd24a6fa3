// Timing of enqueued device work with CUDA events: each repetition timed alone, the median kept.
// Used by the autotune (kernel_autotune.h) and the benchmarks. C++17.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cuda/common/cuda_status.h"

namespace gmmscore {

struct CudaEventPair {
  CudaEventPair() = default;
  CudaEventPair(const CudaEventPair&) = delete;
  CudaEventPair& operator=(const CudaEventPair&) = delete;
  ~CudaEventPair() {
    if (start != nullptr) (void)cudaEventDestroy(start);
    if (stop != nullptr) (void)cudaEventDestroy(stop);
  }
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
};

// Median milliseconds of enqueue(i) (returning absl::Status) on stream for i = warmup ..
// warmup + iterations - 1, after warmup untimed calls.
template <typename Enqueue>
absl::StatusOr<double> MedianMilliseconds(cudaStream_t stream, int warmup, int iterations,
                                          Enqueue&& enqueue) {
  CudaEventPair events;
  GMM_CUDA_RETURN_IF_ERROR(cudaEventCreate(&events.start));
  GMM_CUDA_RETURN_IF_ERROR(cudaEventCreate(&events.stop));
  std::vector<double> ms;
  for (int i = 0; i < warmup + iterations; ++i) {
    GMM_CUDA_RETURN_IF_ERROR(cudaEventRecord(events.start, stream));
    GMM_RETURN_IF_ERROR(enqueue(i));
    GMM_CUDA_RETURN_IF_ERROR(cudaEventRecord(events.stop, stream));
    GMM_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(events.stop));
    float elapsed = 0.0f;
    GMM_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&elapsed, events.start, events.stop));
    if (i >= warmup) ms.push_back(elapsed);
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

}  // namespace gmmscore

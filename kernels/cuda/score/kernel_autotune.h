// The autotune behind CudaScorer's choice of kernel per batch shape: the candidate configurations
// of a mode, and timing them on the device to keep the fastest.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cuda/score/kernel_config.h"

namespace gmmscore {

// Launches of 2^(b - 1) + 1 to 2^b frames share bucket b (1 frame: bucket 0) and one choice.
int32_t ShapeBucket(int32_t frames);
inline constexpr int32_t kShapeBuckets = 32;

// What the autotune times for a launch of `frames` frames: SIMT for kSimt and kAuto, the tensor
// kind of the mode (TensorKindOf) where tensor_available, in every blocking that can matter at
// that size (no block of more frame tiles than the launch has; splits only up to kSplitMaxFrames
// frames).
std::vector<CudaKernelConfig> AutotuneCandidates(CudaKernelMode mode, bool tensor_available,
                                                 int32_t frames);

// Times launch(candidate) for each candidate on stream with CUDA events, one warm-up and the
// median of a few runs each, and returns the fastest. launch enqueues on stream.
absl::StatusOr<CudaKernelConfig> PickFastest(
    const std::vector<CudaKernelConfig>& candidates, cudaStream_t stream,
    const std::function<absl::Status(const CudaKernelConfig&)>& launch);

}  // namespace gmmscore

// The device kernels of the cuBLAS two-kernel peer (Vaněk, Trmal, Psutka and Psutka, "Optimization
// of the Gaussian Mixture Model Evaluation on GPU", Interspeech 2011, section 3): the expanded
// frames [1, x', x'^2] the SGEMM multiplies, and the per-state log-add that reduces the SGEMM's
// Gaussians x frames matrix.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"

namespace gmmscore {

// expanded (column-major, (2 dim + 1) x frames) = [1, x - shift, (x - shift)^2] per frame of
// feats (row-major frames x dim).
absl::Status LaunchExpandFrames(const float* feats, const float* shift, int32_t frames, int32_t dim,
                                float* expanded, cudaStream_t stream);

// out (row-major frames x states) = log sum exp over each state's Gaussians [gauss_begin[s],
// gauss_begin[s + 1]) of gauss_scores (column-major, num_gauss x frames).
absl::Status LaunchLogAddStates(const float* gauss_scores, int64_t num_gauss,
                                const uint32_t* gauss_begin, int32_t num_states, int32_t frames,
                                float* out, cudaStream_t stream);

}  // namespace gmmscore

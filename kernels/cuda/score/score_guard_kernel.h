// The kernel every CUDA scoring launch ends with (model/score_guard.h): per frame and watched
// state (one with outliers, or where the guard can fire for the kernel's gamma: GuardCanFire), it
// log-adds the state's outlier Gaussians in the direct form (the layouts leave them out) and,
// where the guard fires, rescores the whole state in the direct form in double. C++17.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"
#include "kernels/cuda/score/guard_model_view.h"
#include "kernels/cuda/score/simt_model_view.h"

namespace gmmscore {

// watched (device): num_watched states; feats (device): frames x dim, not shifted; out (device):
// frames x num_states in nats, updated in place. gamma 0 turns the guard off (the outliers are
// still added). Nothing is launched for no watched state. Asynchronous on stream.
absl::Status GuardScores(const SimtModelView& model, const GuardModelView& guard,
                         const int32_t* watched, int32_t num_watched, const float* feats,
                         int32_t num_frames, float gamma, float* out, cudaStream_t stream);

}  // namespace gmmscore

// The fusion epilogue on the device: the scores of several models (same frames, same states) in
// device memory combined by the rules of kernels/fusion.h, with the same arithmetic, so the fused
// scores equal FuseScores' on the same per-model scores (max, log-linear, select: bit for bit;
// log-add: to the last float bit or two, the device's exp and log being another implementation).
//
// Model k's scores are [frames][states] at scores + k * frames * states. C++17, like the kernels'
// other headers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"

namespace gmmscore {

inline constexpr int32_t kMaxFusedModels = 8;

// The element-wise rules, as the kernel reads them.
enum class DeviceFusionRule : int32_t { kMax, kLogLinear, kLogAdd };

// One segment of a batch (a window of one stream, say): its rule and per-model weights.
struct DeviceFusionSegment {
  DeviceFusionRule rule = DeviceFusionRule::kMax;
  float weights[kMaxFusedModels] = {};
};

// Fuses frame t of every model by segments[frame_segment[t]] into out ([frames][states]); frames
// whose segment index is negative are left as they are. All pointers are device memory.
absl::Status LaunchFuseElementwise(const float* scores, int32_t models, int32_t frames,
                                   int32_t states, const DeviceFusionSegment* segments,
                                   const int32_t* frame_segment, float* out, cudaStream_t stream);

// The select rule's running state on the device, carried from batch to batch: per model the
// best-state scores of the last `window` frames (a ring indexed by a frame's position in the
// sequence modulo window) and their sum.
struct DeviceSelectState {
  double* recent = nullptr;  // [models][window]
  double* sums = nullptr;    // [models], zero at the start of a sequence
  int32_t window = 0;
};

// The select rule for the next `frames` frames of a sequence of which frames_seen came before:
// per frame and model the best-state score (into frame_best, [models][frames]), the windowed sums
// in the order of SelectTracker (into window_sums, [models][frames]), then each frame's row of the
// model with the highest sum (the first on a tie) into out. Updates state.
absl::Status LaunchSelect(const float* scores, int32_t models, int32_t frames, int32_t states,
                          const DeviceSelectState& state, int64_t frames_seen, float* frame_best,
                          double* window_sums, float* out, cudaStream_t stream);

}  // namespace gmmscore

// The fused SIMT scoring kernel (paper gmm-scoring-on-gpu.md, Algorithm 1) and its launcher. A
// thread block scores one group of kGroupStates states against kSlices slices of kFrames frames
// (one thread per state and slice); SimtKernel picks the variant that fills the device best for a
// window.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "kernels/cuda/simt_model_view.h"

namespace gmmscore {

class SimtKernel {
 public:
  // Reads the current device's multiprocessor count and each variant's occupancy for this
  // dimension. Fails when the dimension is too large for the frames to fit in shared memory.
  static absl::StatusOr<SimtKernel> Create(int32_t dim);

  // Scores num_frames frames of feats (device, frames x dim, row-major, not shifted) into out
  // (device, frames x num_states, the model's state order). Asynchronous on stream.
  absl::Status Launch(const SimtModelView& model, const float* feats, int32_t num_frames,
                      float* out, cudaStream_t stream) const;

  // The variant Launch uses for a window, as "frames per thread x slices", e.g. "16x2".
  std::string VariantName(int32_t num_frames, int32_t num_groups) const;

  static constexpr int kNumVariants = 4;

 private:
  int Choose(int32_t num_frames, int32_t num_groups) const;

  int32_t multiprocessors_ = 0;
  std::array<int32_t, kNumVariants>
      occupancy_{};  // resident blocks per multiprocessor, 0: unusable
  std::array<int32_t, kNumVariants> shared_bytes_{};
};

}  // namespace gmmscore

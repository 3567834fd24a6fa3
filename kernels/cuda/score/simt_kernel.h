// The fused SIMT scoring kernel (Vaněk, Trmal, Psutka and Psutka, "Optimization of the Gaussian
// Mixture Model Evaluation on GPU", Interspeech 2011, Algorithm 1) and its launcher. A thread block
// scores one group of kGroupStates states against kSimtBlockFrames frames, in kSimtSlices slices of
// kSimtFrames frames with one thread per state and slice; with splits, several blocks share a
// group's Gaussians.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "kernels/cuda/score/simt_model_view.h"

namespace gmmscore {

inline constexpr int32_t kSimtFrames = 8;  // frames per thread (running log-sums per thread)
// Slices share each parameter load through L1, halving what the blocks read from L2.
inline constexpr int32_t kSimtSlices = 2;
inline constexpr int32_t kSimtBlockFrames = kSimtFrames * kSimtSlices;

class SimtKernel {
 public:
  // Reads the kernel's registers and occupancy on the current device for this dimension. Fails
  // when the dimension is too large for a block's frames to fit in shared memory.
  static absl::StatusOr<SimtKernel> Create(int32_t dim);

  // Scores num_frames frames of feats (device, frames x dim, row-major, not shifted) into out
  // (device, frames x num_states, the model's state order), in `splits` blocks a group
  // (kernel_config.h); split_scratch (device) holds splits x num_frames x num_groups x
  // kGroupStates floats where splits > 1, and may be null otherwise. Asynchronous on stream.
  absl::Status Launch(const SimtModelView& model, const float* feats, int32_t num_frames,
                      int32_t splits, float* split_scratch, float* out, cudaStream_t stream) const;

  // Registers per thread and resident blocks per multiprocessor, for reports.
  std::string Summary() const;

 private:
  int32_t shared_bytes_ = 0;
  int32_t registers_ = 0;
  int32_t blocks_per_sm_ = 0;
};

}  // namespace gmmscore

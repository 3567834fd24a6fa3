// BatchForwardBackward (kernels/batch_forward_backward.h) on one GPU: a batch of utterances'
// graphs packed as for the Viterbi (packed_graphs.h), their scores uploaded (Run) or already on
// the device (RunOnDevice: CudaAligner scores there), one launch of the
// forward-backward kernel (forward_backward_kernel.h), and each frame's arc posteriors summed by
// transition-id on the host. The device holds, per utterance, its forward layers (8 bytes a frame
// and state) and its arc posteriors (4 bytes a frame and arc): a batch that does not fit is run
// half at a time, and a single utterance that does not fit is refused (ResourceExhausted).
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/batch_forward_backward.h"

namespace gmmscore {

class CudaForwardBackward final : public BatchForwardBackward {
 public:
  // Unavailable for no such device.
  static absl::StatusOr<std::unique_ptr<CudaForwardBackward>> Create(int device);

  absl::StatusOr<std::vector<PosteriorResult>> Run(std::span<const ViterbiUtterance> utterances,
                                                   const TransitionModel& model,
                                                   float acoustic_scale) override;

  // graphs[u] over frames[u] rows of device_scores (rows of model.NumPdfs() natural-log
  // likelihoods; utterance u's rows follow utterance u - 1's), on `stream`, which is synchronised
  // before returning.
  absl::StatusOr<std::vector<PosteriorResult>> RunOnDevice(
      std::span<const AlignGraph* const> graphs, std::span<const int32_t> frames,
      const float* device_scores, const TransitionModel& model, float acoustic_scale,
      cudaStream_t stream);

  // The most device memory one launch may take, scores not included (0: what the device has
  // free); for tests.
  void set_memory_budget(int64_t bytes) { memory_budget_ = bytes; }

 private:
  explicit CudaForwardBackward(int device) : device_(device) {}
  const int device_;
  int64_t memory_budget_ = 0;
};

}  // namespace gmmscore

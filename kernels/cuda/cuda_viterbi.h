// BatchViterbi (kernels/batch_viterbi.h) on one GPU: a batch of utterances packed by destination
// state, aligned by one launch of the Viterbi kernel (viterbi_kernel.h), read back. AlignOnDevice
// takes scores already in device memory (CudaAligner scores there); Align uploads host scores.
// Back-pointers take 4 bytes per frame and graph state of every utterance of a batch: the device
// must hold them all (an hour of audio on a graph of 10,000 states needs 14 GB); the room is
// checked before anything is allocated.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/batch_viterbi.h"

namespace gmmscore {

class CudaViterbi final : public BatchViterbi {
 public:
  // Unavailable for no such device.
  static absl::StatusOr<std::unique_ptr<CudaViterbi>> Create(int device);

  absl::StatusOr<std::vector<ViterbiResult>> Align(std::span<const ViterbiUtterance> utterances,
                                                   const TransitionModel& model,
                                                   float acoustic_scale) override;

  // graphs[u] aligned to frames[u] rows of device_scores (rows of model.NumPdfs() natural-log
  // likelihoods; utterance u's rows follow utterance u - 1's), on `stream`, which is synchronised
  // before returning. InvalidArgument naming the utterance for a graph that does not fit the
  // model or has an epsilon cycle.
  absl::StatusOr<std::vector<ViterbiResult>> AlignOnDevice(
      std::span<const AlignGraph* const> graphs, std::span<const int32_t> frames,
      const float* device_scores, const TransitionModel& model, float acoustic_scale,
      cudaStream_t stream);

 private:
  explicit CudaViterbi(int device) : device_(device) {}
  const int device_;
};

}  // namespace gmmscore

// BatchViterbi (kernels/batch_viterbi.h) on one GPU: a batch of utterances packed by destination
// state, uploaded, aligned by one launch of the Viterbi kernel (viterbi_kernel.h), and read back.
// Back-pointers take 4 bytes per frame and graph state of every utterance of a batch: the device
// must hold them all (an hour of audio on a graph of 10,000 states needs 14 GB); the room is
// checked before anything is allocated.
#pragma once

#include <memory>

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

 private:
  explicit CudaViterbi(int device) : device_(device) {}
  const int device_;
};

}  // namespace gmmscore

// The Aligner (align/aligner.h) over a device's exact batch aligner (kernels/batch_aligner.h:
// frames scored and aligned on the device, every path considered, so the beams never prune and
// there is no retry). Each graph is readied on the host (PrepareExactAlignGraph, then Kaldi's
// careful graph where asked); a batch is one launch of up to 1024 utterances or 2 million frames.
#pragma once

#include "align/aligner.h"
#include "kernels/batch_aligner.h"
#include "model/transition_model.h"

namespace gmmscore {

class DeviceAligner final : public Aligner {
 public:
  // options must pass ValidateAlignOptions; model (the device's model's HMM) and device must
  // outlive the aligner.
  DeviceAligner(const AlignOptions& options, const TransitionModel& model, BatchAligner& device)
      : options_(options), model_(model), device_(device) {}

  AlignerBatchLimits batch_limits() const override {
    return {.utterances = 1024, .frames = 2'000'000};
  }

  // Fails where the device does (no room for the batch, a CUDA error).
  absl::StatusOr<std::vector<UtteranceAlignment>> Align(std::span<const UtteranceToAlign> batch,
                                                        bool posteriors) override;

 private:
  const AlignOptions options_;
  const TransitionModel& model_;
  BatchAligner& device_;
};

}  // namespace gmmscore

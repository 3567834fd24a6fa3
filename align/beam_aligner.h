// The Aligner (align/aligner.h) that aligns as Kaldi's gmm-align-compiled does: each utterance's
// frames scored by a FusedScorer (one model: its pdfs), then AlignUtterance (align/
// align_utterance.h: Viterbi pruned by the beam, once more with the retry beam where no final
// state is reached). One utterance a batch, so that one utterance's scores are held at a time.
#pragma once

#include "align/aligner.h"
#include "kernels/fused_scorer.h"
#include "model/transition_model.h"

namespace gmmscore {

class BeamAligner final : public Aligner {
 public:
  // options must pass ValidateAlignOptions; model (the scorer's model's HMM) and scorer must
  // outlive the aligner.
  BeamAligner(const AlignOptions& options, const TransitionModel& model, const FusedScorer& scorer)
      : options_(options), model_(model), scorer_(scorer) {}

  AlignerBatchLimits batch_limits() const override { return {.utterances = 1}; }

  // Fails where the scorer does (features not checked as UtteranceToAlign asks, a device error).
  absl::StatusOr<std::vector<UtteranceAlignment>> Align(std::span<const UtteranceToAlign> batch,
                                                        bool posteriors) override;

 private:
  const AlignOptions options_;
  const TransitionModel& model_;
  const FusedScorer& scorer_;
};

}  // namespace gmmscore

// Maximum-likelihood re-estimation of a TransitionModel's probabilities from per-transition-id
// counts, with Kaldi's rules (TransitionModel::MleUpdate and MleUpdateShared,
// src/hmm/transition-model.cc) and gmm-est's defaults:
//  - a transition-state with one transition is left alone; one whose counts sum below min_count
//    keeps its probabilities;
//  - otherwise p = count / total, then three rounds of renormalising and flooring at `floor`;
//  - with share_for_pdfs, the counts of every transition-state with the same forward pdf are
//    pooled and the result shared.
// The probabilities are computed in float, as Kaldi stores them, with its sums' rounding
// (util/kaldi_blas.h), so that the model is Kaldi's to the last bit.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "model/gmm_stats.h"
#include "model/transition_model.h"

namespace gmmscore {

struct TransitionUpdateOptions {
  float floor = 0.01f;     // --transition-floor
  float min_count = 5.0f;  // --transition-min-count
  bool share_for_pdfs = false;
};

struct TransitionUpdateSummary {
  double objective_change = 0.0;  // sum over transitions of count x (new - old log-probability)
  double count = 0.0;
  int32_t floored = 0;
  int32_t skipped = 0;  // transition-states (or pdfs, shared) below min_count
};

absl::StatusOr<TransitionModel> MleUpdateTransitions(const TransitionUpdateOptions& options,
                                                     const TransitionStats& stats,
                                                     const TransitionModel& model,
                                                     TransitionUpdateSummary* summary);

}  // namespace gmmscore

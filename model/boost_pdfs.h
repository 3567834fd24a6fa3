// Which pdfs a set of phones uses, and scaling those pdfs' mixture weights: Kaldi's
// GetPdfsForPhones (src/hmm/hmm-utils.h) and gmm-boost-silence, which recipes run as
// `--boost-silence 1.25` so that alignment prefers silence.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "model/gmm_model.h"
#include "model/transition_model.h"

namespace gmmscore {

struct PhonePdfs {
  std::vector<int32_t> pdfs;  // sorted, unique: every pdf of a transition-state of those phones
  bool exclusive = true;      // false where another phone uses one of them too
};

// `phones` sorted and unique.
PhonePdfs PdfsForPhones(const TransitionModel& tm, const std::vector<int32_t>& phones);

// The model with the weights of each pdf in `pdfs` multiplied by factor (> 0), as given: they no
// longer sum to 1, and every score of those pdfs rises by log(factor).
absl::StatusOr<GmmModel> ScalePdfWeights(const GmmModel& model, const std::vector<int32_t>& pdfs,
                                         float factor);

}  // namespace gmmscore

// A flat start, as Kaldi's gmm-init-mono makes one: every pdf of an HMM a single Gaussian at the
// features' global mean and variance, the transition probabilities those the topology gives.
// gmmscore train begins from it (after an equal alignment, align/equal_align.h).
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "model/gmm_model.h"
#include "model/transition_model.h"

namespace gmmscore {

// The same topology and tuples, each transition's probability the topology's.
absl::StatusOr<TransitionModel> TopologyProbabilities(const TransitionModel& hmm);

// mean and variance per dimension (variances > 0).
absl::StatusOr<GmmModel> FlatStartModel(const TransitionModel& hmm, const std::vector<double>& mean,
                                        const std::vector<double>& variance);

}  // namespace gmmscore

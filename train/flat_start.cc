#include "train/flat_start.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<TransitionModel> TopologyProbabilities(const TransitionModel& hmm) {
  std::vector<float> log_probs = hmm.log_probs();
  for (int32_t tstate = 1; tstate <= hmm.NumTransitionStates(); ++tstate) {
    const TransitionTuple& tuple = hmm.tuples()[size_t(tstate - 1)];
    const HmmState& state = hmm.topology().TopologyForPhone(tuple.phone)[size_t(tuple.hmm_state)];
    if (int32_t(state.transitions.size()) != hmm.NumTransitionIndices(tstate)) {
      return absl::InvalidArgumentError(
          absl::StrCat("transition-state ", tstate, " does not match its topology"));
    }
    for (int32_t i = 0; i < hmm.NumTransitionIndices(tstate); ++i) {
      log_probs[size_t(hmm.FirstTransitionId(tstate) + i)] =
          std::log(state.transitions[size_t(i)].second);
    }
  }
  return TransitionModel::Create(hmm.topology(), hmm.tuples(), std::move(log_probs));
}

absl::StatusOr<GmmModel> FlatStartModel(const TransitionModel& hmm, const std::vector<double>& mean,
                                        const std::vector<double>& variance) {
  if (mean.empty() || mean.size() != variance.size()) {
    return absl::InvalidArgumentError("the global mean and variance do not match");
  }
  GmmModelSpec spec;
  spec.dim = int32_t(mean.size());
  GMM_ASSIGN_OR_RETURN(spec.hmm, TopologyProbabilities(hmm));
  spec.gauss_begin.push_back(0);
  for (int32_t pdf = 0; pdf < hmm.NumPdfs(); ++pdf) {
    spec.weights.push_back(1.0f);
    for (size_t d = 0; d < mean.size(); ++d) {
      spec.means.push_back(static_cast<float>(mean[d]));
      spec.variances.push_back(static_cast<float>(variance[d]));
    }
    spec.gauss_begin.push_back(uint32_t(pdf + 1));
  }
  spec.source_format = "kaldi";
  return GmmModel::Create(std::move(spec));
}

}  // namespace gmmscore

#include "kernels/fused_scorer.h"

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<std::unique_ptr<HostFusedScorer>> HostFusedScorer::Create(
    std::vector<std::unique_ptr<Scorer>> scorers, FusionSpec spec) {
  GMM_RETURN_IF_ERROR(ValidateFusion(&spec, scorers.size()));
  for (const auto& s : scorers) {
    if (s->num_states() != scorers[0]->num_states() || s->dim() != scorers[0]->dim()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "fused models must have the same states and dimension: ", scorers[0]->num_states(), " x ",
          scorers[0]->dim(), " vs ", s->num_states(), " x ", s->dim()));
    }
  }
  return std::unique_ptr<HostFusedScorer>(new HostFusedScorer(std::move(scorers), std::move(spec)));
}

std::string HostFusedScorer::name() const {
  if (scorers_.size() == 1) return scorers_[0]->name();
  return absl::StrCat(scorers_[0]->name(), ", ", scorers_.size(), " models fused on the host");
}

absl::Status HostFusedScorer::Score(const Matrix& feats, Matrix* fused) const {
  if (scorers_.size() == 1) return scorers_[0]->Score(feats, fused);
  std::vector<Matrix> scores(scorers_.size());
  std::vector<const Matrix*> parts;
  for (size_t k = 0; k < scorers_.size(); ++k) {
    GMM_RETURN_IF_ERROR(scorers_[k]->Score(feats, &scores[k]));
    parts.push_back(&scores[k]);
  }
  return FuseScores(spec_, parts, fused);
}

}  // namespace gmmscore

// Fusion of several models' scores for the same frames and the same states (paper
// gmm-scoring-on-gpu.md, section 1: speaker- or condition-specific models scored together):
//   max         per frame and state, the best model's log-likelihood;
//   log-linear  sum_k w_k log p_k (a weighted product of likelihoods);
//   log-add     log sum_k w_k p_k (linear interpolation of likelihoods; weights sum to 1);
//   select      per frame, all scores of the model whose best-state log-likelihood summed over
//               the last `window` frames (this one included) is highest; causal, so a stream
//               can apply it window by window.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/util/matrix.h"

namespace gmmscore {

enum class FusionRule { kMax, kLogLinear, kLogAdd, kSelectBest };

struct FusionSpec {
  FusionRule rule = FusionRule::kMax;
  std::vector<float> weights;  // one per model (log-linear, log-add); empty: equal weights
  int32_t select_window = 50;  // frames, for kSelectBest
};

absl::StatusOr<FusionRule> ParseFusionRule(
    const std::string& name);  // max|log-linear|log-add|select
// Checks weights against the model count and fills equal weights when none are given.
absl::Status ValidateFusion(FusionSpec* spec, size_t num_models);

// Fuses per-model score matrices (all frames x states) into out. For kSelectBest,
// `selected` (if not null) receives the chosen model per frame.
absl::Status FuseScores(const FusionSpec& spec, const std::vector<const Matrix*>& scores,
                        Matrix* out, std::vector<int32_t>* selected = nullptr);

}  // namespace gmmscore

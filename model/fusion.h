// Fusion of several models' scores for the same frames and the same states (paper
// Vaněk, Trmal, Psutka and Psutka, "Optimization of the Gaussian Mixture Model Evaluation on GPU",
// Interspeech 2011, section 1: speaker- or condition-specific models scored together):
//   max         per frame and state, the best model's log-likelihood;
//   log-linear  sum_k w_k log p_k (a weighted product of likelihoods);
//   log-add     log sum_k w_k p_k (linear interpolation of likelihoods; weights sum to 1);
//   select      per frame, all scores of the model whose best-state log-likelihood summed over
//               the last `window` frames (this one included) is highest; causal, so a stream
//               can apply it window by window.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "util/matrix.h"

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

// The select rule's running state over a sequence of frames: per model, the best-state scores of
// the last `window` frames and their sum, kept in double and updated in one fixed order (add the
// new frame, then subtract the one that left the window). Every user of the rule (FuseScores, the
// daemon's streams window by window, the CUDA epilogue's scan) does this same arithmetic, so all
// of them select the same model for the same scores.
class SelectTracker {
 public:
  SelectTracker(int32_t window, size_t num_models);
  // Adds one frame, given each model's best-state score; returns the model selected for it (the
  // highest sum, the first such model on a tie).
  size_t Next(std::span<const float> frame_best);

 private:
  const int32_t window_;
  std::vector<std::vector<double>> recent_;  // per model, a ring at frames_seen_ % window_
  std::vector<double> sums_;
  int64_t frames_seen_ = 0;
};

// Fuses per-model score matrices (all frames x states) into out. For kSelectBest,
// `selected` (if not null) receives the chosen model per frame.
absl::Status FuseScores(const FusionSpec& spec, const std::vector<const Matrix*>& scores,
                        Matrix* out, std::vector<int32_t>* selected = nullptr);

}  // namespace gmmscore

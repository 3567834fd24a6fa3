// The float64 reference of the direct form, log sum_g w_g N(x; mu_g, var_g), against which every
// fast path is tested. Slow and exact: one Gaussian, one frame, one dimension at a time.
#pragma once

#include <vector>

#include "kernels/scorer.h"
#include "model/gmm_model.h"

namespace gmmscore {

// Log-likelihood of one frame under one state, in double.
double ReferenceStateLogLikelihood(const GmmModel& model, int32_t state, const float* frame);

// All states for all frames, frames x states, row-major, in double.
std::vector<double> ReferenceScores(const GmmModel& model, const Matrix& feats);

class ReferenceScorer final : public Scorer {
 public:
  explicit ReferenceScorer(const GmmModel& model) : model_(model) {}
  int32_t dim() const override { return model_.dim(); }
  int32_t num_states() const override { return model_.num_states(); }
  std::string name() const override { return "cpu-reference"; }
  absl::Status Score(const Matrix& feats, Matrix* out) const override;

 private:
  const GmmModel& model_;
};

}  // namespace gmmscore

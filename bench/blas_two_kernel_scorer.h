// The CPU peer that benchmarks measure against (docs/PERFORMANCE.md): the
// "two-kernel" path of Vaněk, Trmal, Psutka and Psutka, "Optimization of the Gaussian Mixture Model
// Evaluation on GPU", Interspeech 2011 section 3. An OpenBLAS SGEMM of the expanded form [K,
// mu/var, -1/(2 var)] . [1, x, x^2] writes the whole Gaussians x frames matrix, then a vectorised
// log-add pass reduces it per state.
#pragma once

#include <vector>

#include "kernels/scorer.h"
#include "model/gmm_model.h"

namespace gmmscore {

class BlasTwoKernelScorer final : public Scorer {
 public:
  BlasTwoKernelScorer(const GmmModel& model, int num_threads);
  int32_t dim() const override { return dim_; }
  int32_t num_states() const override { return static_cast<int32_t>(gauss_begin_.size()) - 1; }
  std::string name() const override { return "cpu-openblas-two-kernel"; }
  absl::Status Score(const Matrix& feats, Matrix* out) const override;

 private:
  int32_t dim_;
  int num_threads_;
  std::vector<uint32_t> gauss_begin_;
  std::vector<float> expanded_;              // [Gaussians][2 dim + 1]
  mutable std::vector<float> gauss_scores_;  // [Gaussians][frames], reused across calls
};

}  // namespace gmmscore

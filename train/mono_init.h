// gmm-init-mono (Kaldi's src/gmmbin/gmm-init-mono.cc) without its files: the monophone tree of a
// topology's phones or of shared phone sets (model/monophone_tree.h), the transition model it
// makes (model/tree_transition_model.h), and one Gaussian per pdf, the same for every pdf: the
// training frames' global mean and variance, or mean 1 and variance 1 without frames (what
// gmm-init-mono sets; steps/train_mono.sh always gives frames).
//
// The Gaussians come in the parameters a Kaldi model stores, inverse variances and means times
// inverse variances, computed in the types gmm-init-mono computes them in, so that the model
// written (formats/kaldi_model_copy.h) is Kaldi's to the byte: the statistics in double, summed
// frame by frame (x and x^2); the sums times 1/count; the variance E[x^2] - mean^2; its inverse;
// mean and inverse variance each rounded to float; their product in float.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/context_dependency.h"
#include "model/transition_model.h"
#include "util/matrix.h"

namespace gmmscore {

// The frames' mean and inverse variance per dimension, in float.
struct GlobalGaussian {
  std::vector<float> mean;
  std::vector<float> inv_var;
};

// Mean 1 and inverse variance 1 in every dimension.
GlobalGaussian UnitGaussian(int32_t dim);

// The training frames' statistics, gathered as gmm-init-mono gathers them.
class GlobalStats {
 public:
  explicit GlobalStats(int32_t dim) : sum_(size_t(dim)), sum_squares_(size_t(dim)) {}
  // Errors where the frames are not of the dimension given.
  absl::Status Add(const Matrix& frames);
  // Errors where no frames were added or a variance is not > 0 (Kaldi's "bad variance").
  absl::StatusOr<GlobalGaussian> Gaussian() const;

 private:
  double count_ = 0.0;
  std::vector<double> sum_;
  std::vector<double> sum_squares_;
};

struct MonophoneInit {
  ContextDependency tree;
  TransitionModel hmm;
  // One row per pdf (tree.NumPdfs() rows), one column per dimension.
  Matrix inv_vars;
  Matrix means_invvars;
};

// `shared_phone_sets`: empty for a set per phone of the topology (gmm-init-mono without
// --shared-phones). A `perturb_factor` other than 0 adds, to each pdf's means times inverse
// variances in turn, perturb_factor * g * sqrt(inverse variance) with g Kaldi's RandGauss() from
// rand() never seeded (util/kaldi_random.h), as DiagGmm::Perturb. Kaldi's warnings (phone sets of
// mixed lengths, a phone without pdfs) are appended to `warnings`.
absl::StatusOr<MonophoneInit> InitMonophone(
    const HmmTopology& topology, const std::vector<std::vector<int32_t>>& shared_phone_sets,
    const GlobalGaussian& gaussian, float perturb_factor, std::vector<std::string>* warnings);

}  // namespace gmmscore

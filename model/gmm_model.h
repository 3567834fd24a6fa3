// The canonical acoustic model every reader produces and every backend packs from: a set of
// states ("pdfs", "senones", tied states), each a diagonal-covariance Gaussian mixture with its own
// number of Gaussians, plus the HMM side (TransitionModel) for alignment.
//
// Parameters are kept as float, as every supported file format stores them; the derived
// constants of the expanded form (Vaněk, Trmal, Psutka and Psutka, "Optimization of the Gaussian
// Mixture Model Evaluation on GPU", Interspeech 2011 eq. 1-2) are computed in double:
//   log N_g(x) + log w_g = K_g + sum_d x_d * u_gd + x_d^2 * v_gd
//   u_gd = mu_gd / var_gd,  v_gd = -1 / (2 var_gd),
//   K_g  = log w_g - D/2 log(2 pi) - 1/2 sum_d log var_gd - 1/2 sum_d mu_gd^2 / var_gd.
// Like Kaldi, K includes the log weight and is always recomputed, never trusted from a file.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/transition_model.h"

namespace gmmscore {

// What a reader fills in. Gaussians are stored state after state; state s owns Gaussians
// [gauss_begin[s], gauss_begin[s + 1]).
struct GmmModelSpec {
  int32_t dim = 0;
  std::vector<uint32_t> gauss_begin;  // num_states + 1 entries, starts at 0
  std::vector<float> weights;         // [num_gauss]
  std::vector<float> means;           // [num_gauss * dim], row per Gaussian
  std::vector<float> variances;       // [num_gauss * dim]
  // Variances below this are raised to it when the model is built (0: no floor). Readers keep
  // the file's variances as they are; the floor comes from --variance-floor.
  float variance_floor = 0.0f;
  std::vector<std::string> state_names;  // empty, or one per state
  TransitionModel hmm;                   // empty when the format carries no HMM
  std::string source_format;             // "kaldi", "htk", "sphinx", "native"
};

class GmmModel {
 public:
  // Validates the spec and computes the derived constants. Errors name the state, Gaussian and
  // dimension; readers prefix the file name.
  static absl::StatusOr<GmmModel> Create(GmmModelSpec spec);

  int32_t dim() const { return spec_.dim; }
  int32_t num_states() const { return static_cast<int32_t>(spec_.gauss_begin.size()) - 1; }
  int64_t num_gauss() const { return static_cast<int64_t>(spec_.weights.size()); }
  uint32_t gauss_begin(int32_t state) const { return spec_.gauss_begin[state]; }
  uint32_t gauss_end(int32_t state) const { return spec_.gauss_begin[state + 1]; }
  int32_t num_gauss_in(int32_t state) const {
    return static_cast<int32_t>(gauss_end(state) - gauss_begin(state));
  }
  int32_t min_gauss_per_state() const;
  int32_t max_gauss_per_state() const;

  float weight(int64_t g) const { return spec_.weights[g]; }
  std::span<const float> mean(int64_t g) const { return {&spec_.means[g * dim()], size_t(dim())}; }
  std::span<const float> variance(int64_t g) const {
    return {&spec_.variances[g * dim()], size_t(dim())};
  }
  // Derived, per Gaussian: K (log weight included), u = mu/var, v = -1/(2 var).
  double gconst(int64_t g) const { return gconst_[g]; }
  std::span<const float> mean_invvar(int64_t g) const {
    return {&mean_invvar_[g * dim()], size_t(dim())};
  }
  std::span<const float> neg_half_invvar(int64_t g) const {
    return {&neg_half_invvar_[g * dim()], size_t(dim())};
  }
  double log_weight(int64_t g) const;

  const GmmModelSpec& spec() const { return spec_; }
  const std::vector<std::string>& state_names() const { return spec_.state_names; }
  const TransitionModel& hmm() const { return spec_.hmm; }
  const std::string& source_format() const { return spec_.source_format; }
  float variance_floor() const { return spec_.variance_floor; }
  // Bytes of parameters held on the host (means, variances, weights and the derived arrays).
  int64_t host_bytes() const;

 private:
  GmmModelSpec spec_;
  std::vector<double> gconst_;
  std::vector<float> mean_invvar_;
  std::vector<float> neg_half_invvar_;
};

}  // namespace gmmscore

// A Kaldi acoustic model (final.mdl) held as Kaldi holds it: the TransitionModel, and each pdf's
// DiagGmm in Kaldi's own parameters (weights, means times inverse variances, inverse variances,
// gconsts) as its files store them. GmmModel (model/gmm_model.h) keeps means and variances
// instead, which do not convert back to the same floats; tools that must leave Kaldi's bytes
// (gmm-copy, gmm-est, gmm-mixup, gmm-init-mono) work on this form. Files:
// formats/kaldi_model_copy.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/gmm_model.h"
#include "model/transition_model.h"
#include "util/matrix.h"

namespace gmmscore {

struct KaldiStoredGmm {
  std::vector<float> gconsts;
  std::vector<float> weights;
  Matrix means_invvars;  // Gaussians x dimension
  Matrix inv_vars;

  int32_t num_gauss() const { return static_cast<int32_t>(weights.size()); }
};

struct KaldiStoredModel {
  std::optional<TransitionModel> hmm;  // absent: the transition model was not read
  bool has_gmms = false;               // false: the AmDiagGmm was not read
  int32_t dim = 0;
  std::vector<KaldiStoredGmm> pdfs;

  int64_t NumGauss() const;
};

// The posteriors of the GMM's Gaussians for one frame of the model's dimension, written to
// posteriors[0 .. num_gauss), and the frame's log-likelihood, as Kaldi's
// DiagGmm::ComponentPosteriors computes them in float: each Gaussian's gconst + means_invvars . x
// - 0.5 inv_vars . x^2, then a softmax (the sum of exp(l - max) in float, scaled by its inverse).
float KaldiComponentPosteriors(const KaldiStoredGmm& gmm, const float* frame, float* posteriors);

// Kaldi's gconsts of a DiagGmm: log weight - D/2 log(2 pi) + sum_d (log(iv)/2 - mi^2/(2 iv)),
// accumulated in float as Kaldi's DiagGmm::ComputeGconsts does (a +inf becomes -inf; a NaN is an
// error naming the Gaussian).
absl::StatusOr<std::vector<float>> KaldiGconsts(const std::vector<float>& weights,
                                                const Matrix& means_invvars,
                                                const Matrix& inv_vars);

// One Gaussian's mean and variance (double, as Kaldi's DiagGmmNormal holds them) in Kaldi's
// parameters, as DiagGmmNormal::CopyToDiagGmm converts them: the inverse variance divided in
// float, the mean rounded to float and multiplied by it in float.
inline void ToKaldiParameters(double mean, double var, float* mean_invvar, float* inv_var) {
  *inv_var = 1.0f / static_cast<float>(var);
  *mean_invvar = static_cast<float>(mean) * *inv_var;
}

// A whole stored model (transition model and GMMs) as a GmmModel: mean = miv / iv and
// variance = 1 / iv, in double rounded to float; `name` prefixes errors.
absl::StatusOr<GmmModel> StoredToGmmModel(const KaldiStoredModel& stored, const std::string& name);
// Puts each pdf of `after` whose Gaussians differ from `before`'s into `stored` (in Kaldi's
// parameters, gconsts recomputed), so that the pdfs a change (mixing up) left alone keep Kaldi's
// bytes. `before` is StoredToGmmModel(*stored); `after` has its pdfs.
absl::Status StoreChangedPdfs(const GmmModel& before, const GmmModel& after,
                              KaldiStoredModel* stored);
// The whole of model (its transition model and every pdf) in Kaldi's parameters, as
// DiagGmmNormal::CopyToDiagGmm converts them (ToKaldiParameters), gconsts computed.
absl::StatusOr<KaldiStoredModel> GmmModelToStored(const GmmModel& model);

}  // namespace gmmscore

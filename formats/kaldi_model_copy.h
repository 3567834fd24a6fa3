// A Kaldi model (final.mdl) held as Kaldi holds it, for gmm-copy and gmm-mixup: the
// TransitionModel, and each pdf's DiagGmm in Kaldi's own parameters (weights, means times inverse
// variances, inverse variances) as the file stores them, with the gconsts recomputed as Kaldi's
// DiagGmm::ComputeGconsts computes them: in float, a dimension at a time. Written back (text reals
// as Kaldi prints them), the bytes are Kaldi's. GmmModel (formats/kaldi_model.h) keeps means and
// variances instead, which do not convert back to the same floats.
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
};

struct KaldiStoredModel {
  std::optional<TransitionModel> hmm;  // absent: the transition model was not read
  bool has_gmms = false;               // false: the AmDiagGmm was not read
  int32_t dim = 0;
  std::vector<KaldiStoredGmm> pdfs;
};

// Kaldi's gconsts of a DiagGmm: log weight - D/2 log(2 pi) + sum_d (log(iv)/2 - mi^2/(2 iv)),
// accumulated in float as Kaldi does (a +inf becomes -inf; a NaN is an error naming the
// Gaussian).
absl::StatusOr<std::vector<float>> KaldiGconsts(const std::vector<float>& weights,
                                                const Matrix& means_invvars,
                                                const Matrix& inv_vars);

// Reads a model file (any rxfilename, binary or text) as gmm-copy does: the transition model
// where `transitions`, then the AmDiagGmm where `gmms` (either alone is read from the file's
// start). Errors name the file and the byte.
absl::StatusOr<KaldiStoredModel> ReadKaldiStoredModel(const std::string& rxfilename,
                                                      bool transitions, bool gmms);
// Writes what was read, binary or text, to a wxfilename.
absl::Status WriteKaldiStoredModel(const KaldiStoredModel& model, const std::string& wxfilename,
                                   bool binary);

// A whole stored model (transition model and GMMs) as a GmmModel, with the means and variances
// ReadKaldiModel (formats/kaldi_model.h) makes of Kaldi's parameters; `name` prefixes errors.
absl::StatusOr<GmmModel> StoredToGmmModel(const KaldiStoredModel& stored, const std::string& name);
// Puts each pdf of `after` whose Gaussians differ from `before`'s into `stored` (in Kaldi's
// parameters, gconsts recomputed), so that the pdfs a change (mixing up) left alone keep Kaldi's
// bytes. `before` is StoredToGmmModel(*stored); `after` has its pdfs.
absl::Status StoreChangedPdfs(const GmmModel& before, const GmmModel& after,
                              KaldiStoredModel* stored);

}  // namespace gmmscore

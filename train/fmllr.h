// Feature-space MLLR (constrained MLLR, fMLLR) for diagonal-covariance GMMs, as Kaldi estimates
// it for gmm-est-fmllr and SAT (src/transform/fmllr-diag-gmm.*): an affine transform
// W = [A b] (dim x dim+1) of the features, chosen to maximise
//   beta log|det A| + tr(W K^T) - 1/2 sum_i w_i G_i w_i^T
// over the statistics of the frames it adapts, where for each frame x (x+ = [x; 1]) and each
// Gaussian g with posterior p, mean-times-inverse-variance m_g and inverse variance v_g:
//   beta += p,   K += p m_g x+^T,   G_i += p v_gi x+ x+^T.
// The full update is Gales' row-by-row iteration ("Maximum likelihood linear transformations for
// HMM-based speech recognition", M. J. F. Gales, Computer Speech and Language 12, 1998): each row
// w_i = (alpha c_i + k_i) G_i^-1, with c_i the row of cofactors of A and alpha the root of a
// quadratic that maximises the objective; "diag" solves each row's scale and offset in closed
// form, "offset" the offsets alone. As Kaldi: statistics in double except each frame's sums over
// its Gaussians (float), the transform starts at [I 0], no update below min_count frames, and a
// full update that lowers the objective is not applied.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/kaldi_stored_model.h"
#include "util/matrix.h"

namespace gmmscore {

struct FmllrOptions {
  enum class Update { kFull, kDiag, kOffset, kNone };
  Update update = Update::kFull;  // --fmllr-update-type
  double min_count = 500.0;       // --fmllr-min-count
  int32_t num_iters = 40;         // --fmllr-num-iters
};

// "full", "diag", "offset", "none"; an error names the others.
absl::StatusOr<FmllrOptions::Update> ParseFmllrUpdate(absl::string_view name);
// The name ParseFmllrUpdate reads as `update`.
const char* FmllrUpdateName(FmllrOptions::Update update);

class FmllrStats {
 public:
  explicit FmllrStats(int32_t dim);

  int32_t dim() const { return dim_; }

  // One frame of one pdf, weighted (its state posterior): the pdf's Gaussians' posteriors are
  // computed from the frame as Kaldi computes them (float log-likelihoods, softmax), scaled by
  // `weight`. Returns the frame's log-likelihood under the pdf.
  float AccumulateForGmm(const KaldiStoredGmm& gmm, const float* frame, float weight);
  // One frame with the Gaussians' posteriors given (gmm-est-fmllr-gpost), one per Gaussian.
  void AccumulateFromPosteriors(const KaldiStoredGmm& gmm, const float* frame,
                                const float* posteriors);

  // beta, K and G with the frame in hand added.
  double Count();

 private:
  friend struct FmllrSolver;
  void Commit();

  int32_t dim_;
  double beta_ = 0.0;
  std::vector<double> k_;  // dim x (dim + 1)
  std::vector<double> g_;  // dim of (dim + 1) x (dim + 1)
  // The frame being accumulated: its features, and its sums over Gaussians in float (Kaldi's
  // single-frame statistics, committed when another frame comes).
  std::vector<float> x_, a_, b_;
  double frame_count_ = 0.0;
};

struct FmllrEstimate {
  Matrix transform;               // dim x (dim + 1)
  double objective_change = 0.0;  // over the count; 0 where nothing was updated
  double count = 0.0;
  // What Kaldi logs on the way: "fMLLR objf improvement is ..." (LOG), "Not updating fMLLR since
  // below min-count ..." or "No applying fMLLR transform change ..." (WARNING).
  std::vector<std::string> log_lines;
  std::vector<std::string> warnings;
};

// One utterance's frames with their posteriors over pdfs (per frame (pdf, weight) pairs, Kaldi's
// ConvertPosteriorToPdfs order), each pdf's GMM of `model` accumulated for each frame as
// gmm-est-fmllr accumulates them. InvalidArgument where the sizes or a pdf do not fit.
absl::Status AccumulateFmllrForUtterance(
    const KaldiStoredModel& model, const Matrix& feats,
    const std::vector<std::vector<std::pair<int32_t, float>>>& pdf_posteriors, FmllrStats* stats);

// The transform from [I 0], as gmm-est-fmllr estimates each speaker's or utterance's.
FmllrEstimate EstimateFmllr(const FmllrOptions& options, FmllrStats& stats);

// The objective above for a transform (Kaldi's FmllrAuxFuncDiagGmm).
double FmllrObjective(const Matrix& transform, FmllrStats& stats);

}  // namespace gmmscore

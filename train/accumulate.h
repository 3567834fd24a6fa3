// The E-step on the CPU: per-frame Gaussian posteriors within a pdf and the statistics of
// model/gmm_stats.h, with the semantics of Kaldi's gmm-acc-stats-ali (an alignment: weight 1 on
// the aligned pdf) and gmm-acc-stats (posteriors over transition-ids).
//
// Everything is computed in double, in the direct form
//   log w_g N(x; mu_g, var_g) = log w_g - 1/2 (D log 2 pi + sum_d log var_gd + sum_d (x_d -
//   mu_gd)^2 / var_gd),
// so that the statistics are a float64 computation's (Kaldi computes the posteriors in float32 in
// the expanded form; its log-likelihoods differ from ours by about 1e-3 nats on real models). This
// is the reference the GPU statistics are tested against, and the path where there is no GPU.
//
// An utterance is checked whole (dimension, finite features, transition-ids, lengths) and its
// posteriors computed before anything is added, so an error leaves the statistics as they were.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "model/gmm_model.h"
#include "model/gmm_stats.h"
#include "util/matrix.h"

namespace gmmscore {

// Per frame, (transition-id, weight) pairs: Kaldi's Posterior.
using TransitionPosterior = std::vector<std::vector<std::pair<int32_t, float>>>;

class GmmAccumulator {
 public:
  explicit GmmAccumulator(const GmmModel& model);

  const GmmModel& model() const { return model_; }

  // The posteriors of pdf's Gaussians for frame x (x of the model's dimension), written to
  // posteriors[0 .. num_gauss_in(pdf)); returns the frame's log-likelihood under the pdf,
  // log sum_g w_g N(x; g), or an error where it is not finite.
  absl::StatusOr<double> PdfPosteriors(int32_t pdf, const float* x, double* posteriors) const;

  // Adds weight x (posteriors, x, x^2) of one frame to pdf's statistics.
  static void AddFrame(int32_t pdf, const float* x, const double* posteriors, double weight,
                       GmmStats* stats);

  // gmm-acc-stats-ali for one utterance: features [frames x dim], one transition-id per frame.
  // Adds to the GMM statistics with weight 1 on each frame's pdf, counts each transition-id and
  // returns the utterance's log-likelihood along the alignment. Errors say the frame and why.
  absl::StatusOr<double> AccumulateAlignment(const Matrix& features,
                                             std::span<const int32_t> alignment,
                                             ModelStats* stats) const;
  // The same from one pdf per frame (no transitions to count): what adaptation from a decoder's
  // pdf alignment accumulates. Nothing is added where a frame fails.
  absl::StatusOr<double> AccumulatePdfAlignment(const Matrix& features,
                                                std::span<const int32_t> pdfs,
                                                ModelStats* stats) const;

  // Every frame of `frames` (num_frames x dim, row-major) with weight 1 on pdf: the E-step of a
  // single GMM (gmm-global-acc-stats), on `threads` threads (0: all), each with its own
  // statistics, added at the end. Returns the frames' total log-likelihood; an error names the
  // first frame that is not finite, and then nothing is added.
  absl::StatusOr<double> AccumulateFrames(int32_t pdf, const float* frames, int64_t num_frames,
                                          int threads, GmmStats* stats) const;

  // gmm-acc-stats for one utterance: per frame the posteriors over transition-ids, merged per pdf
  // for the GMM statistics. Returns the weighted log-likelihood sum_t sum_pdf gamma log p(x_t|pdf)
  // and adds the total weight to *weight.
  absl::StatusOr<double> AccumulatePosteriors(const Matrix& features,
                                              const TransitionPosterior& posterior,
                                              ModelStats* stats, double* weight) const;

 private:
  // Checks features against the model: dimension and every value finite.
  absl::Status CheckFeatures(const Matrix& features) const;

  const GmmModel& model_;
  // Per Gaussian: log w_g - 1/2 (D log 2 pi + sum_d log var_gd).
  std::vector<double> log_norm_;
  // Per Gaussian and dimension: 1 / var_gd.
  std::vector<double> inv_var_;
};

}  // namespace gmmscore

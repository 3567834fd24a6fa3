// Sufficient statistics for maximum-likelihood (EM) re-estimation of a model's diagonal GMMs and
// its transition probabilities: what Kaldi's AccumAmDiagGmm and its transition-accumulator vector
// hold (src/gmm/mle-am-diag-gmm.h), in the same layout, so that formats/kaldi_accs can read and
// write Kaldi's accumulator files and train/ can estimate from them.
//
// For Gaussian g with per-frame posterior gamma_t(g) and frame x_t:
//   occupancy[g]        = sum_t gamma_t(g)
//   first[g * dim + d]  = sum_t gamma_t(g) x_td           (with kGmmMeans)
//   second[g * dim + d] = sum_t gamma_t(g) x_td^2         (with kGmmVariances)
// All sums are double, as Kaldi keeps them; the variance is formed from them in double by the
// update, never as a difference of float32 numbers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/gmm_model.h"

namespace gmmscore {

// Kaldi's GmmUpdateFlags (src/gmm/model-common.h): which parameters statistics are kept for, and
// which an update changes. The letters of --update-flags: m, v, w, t, and a for all.
enum GmmFlags : uint16_t {
  kGmmMeans = 0x1,
  kGmmVariances = 0x2,
  kGmmWeights = 0x4,
  kGmmTransitions = 0x8,
  kGmmAll = 0xF,
};

// "mvwt" (any subset, any order; 'a' is all) to flags; an error names a letter outside them.
absl::StatusOr<uint16_t> ParseGmmFlags(absl::string_view letters);
std::string GmmFlagsToString(uint16_t flags);
// What statistics a set of flags needs: variances need means, means need weights (occupancies),
// and the occupancies are always kept (Kaldi's AugmentGmmFlags).
uint16_t AugmentGmmFlags(uint16_t flags);

struct GmmStats {
  int32_t dim = 0;
  uint16_t flags = 0;                 // augmented (AugmentGmmFlags)
  std::vector<uint32_t> gauss_begin;  // per pdf, as GmmModelSpec::gauss_begin
  std::vector<double> occupancy;      // [num_gauss]
  std::vector<double> first;          // [num_gauss * dim], empty without kGmmMeans
  std::vector<double> second;         // [num_gauss * dim], empty without kGmmVariances
  // The log-likelihood of the frames accumulated and their (weighted) count: what gmm-est reports
  // as "avg like per frame".
  double total_log_like = 0.0;
  double total_frames = 0.0;

  // Zero statistics shaped like the model's GMMs.
  static GmmStats ForModel(const GmmModel& model, uint16_t flags);

  int32_t num_pdfs() const { return static_cast<int32_t>(gauss_begin.size()) - 1; }
  int64_t num_gauss() const { return static_cast<int64_t>(occupancy.size()); }
  int32_t num_gauss_in(int32_t pdf) const {
    return static_cast<int32_t>(gauss_begin[pdf + 1] - gauss_begin[pdf]);
  }
  // Summed in the order of Kaldi's Vector::Sum (util/kaldi_blas.h): the mixing targets and the
  // weights that come from it are Kaldi's to the last bit.
  double PdfOccupancy(int32_t pdf) const;
  double TotalOccupancy() const;

  // Whether the statistics fit the model: same pdfs, Gaussians per pdf and dimension. The error
  // says the first thing that differs.
  absl::Status CheckMatches(const GmmModel& model) const;
  // Adds other's statistics (same shape and flags, else an error that says what differs).
  absl::Status Add(const GmmStats& other);
  // Rounds the occupancies and the first and second moments to float, as an accumulator file
  // carries them (Kaldi's AccumDiagGmm::Write): the statistics gmm-est reads.
  void RoundAsWritten();
};

// The per-transition-id counts that come with a model's GMM statistics (Kaldi's transition accs):
// index 0 unused, one entry per transition-id.
using TransitionStats = std::vector<double>;

// What one accumulator file holds (gmm-acc-stats-ali's output): the transition counts, then the
// GMM statistics.
struct ModelStats {
  TransitionStats transitions;
  GmmStats gmm;

  static ModelStats ForModel(const GmmModel& model, uint16_t flags);
  absl::Status Add(const ModelStats& other);
};

}  // namespace gmmscore

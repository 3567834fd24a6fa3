// The M-step: maximum-likelihood re-estimation of a model's diagonal GMMs from its statistics,
// with the rules and defaults of Kaldi's MleDiagGmmUpdate / MleAmDiagGmmUpdate
// (src/gmm/mle-diag-gmm.cc), which gmm-est applies:
//
//  - Gaussian g of a pdf with occupancy c_g (and c the pdf's total) is updated when
//    c_g > min_gaussian_occupancy and c_g / c > min_gaussian_weight:
//      w = c_g / c,  mu = first / c_g,  var = second / c_g - mu^2   (all in double),
//    each only where the update flags ask for it; a variance updated around a mean that is kept
//    adds back (old mu - new mu)^2. Variances are floored at min_variance, or at a per-dimension
//    floor vector where one is given (and counted wherever the statistics have variances, as
//    Kaldi counts them, even where the flags leave the variances alone).
//  - A Gaussian below those thresholds keeps its parameters, and is removed where
//    remove_low_count_gaussians is set, unless it is the pdf's last; its weight becomes
//    max(c_g / c, min_gaussian_weight) otherwise. Weights are renormalised after a removal.
//  - A pdf without any count keeps 1/G weights where weights are updated, as Kaldi does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/gmm_model.h"
#include "model/gmm_stats.h"

namespace gmmscore {

struct MleOptions {
  double min_gaussian_weight = 1.0e-5;
  double min_gaussian_occupancy = 10.0;
  double min_variance = 0.001;
  bool remove_low_count_gaussians = true;
  // Per-dimension variance floor; empty: min_variance alone.
  std::vector<double> variance_floor;
};

struct MleSummary {
  // The auxiliary function's change, sum_g c_g (log w_g N(.; g)) over the statistics, and the
  // count it is over: what gmm-est reports as "objective function improvement per frame".
  double objective_change = 0.0;
  double count = 0.0;
  int64_t floored_elements = 0;
  int64_t floored_gaussians = 0;
  int64_t removed_gaussians = 0;
  // What gmm-est warns of, in its words, one line each: a Gaussian with too little data removed,
  // or kept because it is its pdf's last (or removal is off).
  std::vector<std::string> warnings;
};

// gmm-est's warnings, worded and formatted as Kaldi's MleDiagGmmUpdate words them (fixed notation
// for the removal's weight and count, the stream's default otherwise): a Gaussian removed, and
// one kept although its data is too little (`removing`: because it is its pdf's last).
std::string GmmRemovalWarning(double prob, double occ, int32_t dim);
std::string GmmKeptWarning(bool removing, int32_t index, double occ, double prob);

// One Gaussian's update (statistics index `gauss`) in double, as MleDiagGmmUpdate forms it:
// mean = first x (1/c); where the statistics have variances, var = second x (1/c) - mean^2, plus
// (old mean - new mean)^2 where `flags` keep the mean, floored as `options` say. On entry `mean`
// and `var` (dim values each) hold the old parameters; without mean statistics they are left
// alone, and so is `var` without variance statistics. Returns how many elements were floored.
int32_t EstimateGaussian(const MleOptions& options, const GmmStats& stats, uint16_t flags,
                         size_t gauss, double* mean, double* var);

// The variance floor "relative to the global variance": scale x the variance of all the
// statistics' frames pooled (HTK's vFloor from HCompV -f), per dimension.
absl::StatusOr<std::vector<double>> RelativeVarianceFloor(const GmmStats& stats, double scale);

// The updated model: the same HMM, the GMMs re-estimated. Errors where the statistics do not fit
// the model or the update gives a model that is not valid (GmmModel::Create).
absl::StatusOr<GmmModel> MleUpdate(const MleOptions& options, const GmmStats& stats, uint16_t flags,
                                   const GmmModel& model, MleSummary* summary);

// sum_g c_g K_g + first . mu/var - 1/2 second . 1/var: the statistics' log-likelihood under the
// model, up to terms that do not depend on it (Kaldi's MlObjective).
double MlObjective(const GmmModelSpec& model, const GmmStats& stats);

}  // namespace gmmscore

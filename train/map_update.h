// MAP (maximum a posteriori) adaptation of a model's diagonal GMMs to a speaker's or an
// utterance's statistics, the model itself being the prior: the rules and defaults of Kaldi's
// MapDiagGmmUpdate / MapAmDiagGmmUpdate (src/gmm/mle-diag-gmm.cc), which gmm-adapt-map applies.
//
// For Gaussian g of a pdf, with prior parameters w, mu, var, statistics c_g (occupancy), F_g
// (first order) and S_g (second order), and c the pdf's total occupancy, all in double:
//
//   w'   = (c_g + tau_w w) / (c + tau_w)
//   mu'  = (F_g + tau_m mu) / (c_g + tau_m)                               where c_g > 0
//   var' = c_g / (c_g + tau_v) E[(x - m)^2] + tau_v / (c_g + tau_v) var     where c_g > 0
//   E[(x - m)^2] = S_g / c_g - 2 m F_g / c_g + m^2
//
// tau_w is per pdf, not per Gaussian, so the weights stay normalised; the variance is taken
// about m = mu' where the means are updated too, else about the prior mean mu.
//
// Only the parameters the update flags name change. A Gaussian without count (c_g <= 0) keeps its
// mean and variance, and its weight shrinks towards 0 as the pdf's other Gaussians take the count.
// tau = 0 gives the ML estimate of what the statistics saw; tau -> infinity keeps the prior. As in
// Kaldi there is no floor and no removal: with tau_v > 0 a variance keeps at least
// tau_v / (c_g + tau_v) of the prior's. Where a pdf has no count and tau_w is 0, Kaldi divides 0
// by 0; here the pdf keeps its weights.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "model/gmm_model.h"
#include "model/gmm_stats.h"

namespace gmmscore {

// gmm-adapt-map's --mean-tau, --variance-tau and --weight-tau, with Kaldi's defaults; each >= 0.
struct MapOptions {
  double mean_tau = 10.0;
  double variance_tau = 50.0;
  double weight_tau = 10.0;
};

// An error naming the first tau that is negative or not finite.
absl::Status CheckMapOptions(const MapOptions& options);

struct MapSummary {
  // The change of the statistics' log-likelihood sum_g c_g log w_g N(.; g) (MlObjective) from
  // the prior to the adapted model, and the count it is over: what gmm-adapt-map reports as
  // "objective function change from MAP".
  double objective_change = 0.0;
  double count = 0.0;
};

// The adapted model: the same HMM, the GMMs moved towards the statistics. Errors where the
// statistics do not fit the model, keep less than the flags ask to update, the options fail
// CheckMapOptions, or the adapted parameters do not make a valid model (GmmModel::Create: a
// variance that reached 0 with variance_tau 0, say).
absl::StatusOr<GmmModel> MapUpdate(const MapOptions& options, const GmmStats& stats, uint16_t flags,
                                   const GmmModel& model, MapSummary* summary);

}  // namespace gmmscore

#include "train/map_update.h"

#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "train/mle_update.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

absl::Status CheckTau(const char* name, double tau) {
  if (tau >= 0.0 && std::isfinite(tau)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("the MAP ", name, " is ", tau, "; it must be a finite number >= 0"));
}

}  // namespace

absl::Status CheckMapOptions(const MapOptions& options) {
  GMM_RETURN_IF_ERROR(CheckTau("mean tau", options.mean_tau));
  GMM_RETURN_IF_ERROR(CheckTau("variance tau", options.variance_tau));
  return CheckTau("weight tau", options.weight_tau);
}

absl::StatusOr<GmmModel> MapUpdate(const MapOptions& options, const GmmStats& stats, uint16_t flags,
                                   const GmmModel& model, MapSummary* summary) {
  GMM_RETURN_IF_ERROR(stats.CheckMatches(model));
  if ((flags & (kGmmMeans | kGmmVariances | kGmmWeights) & ~stats.flags) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("update flags ", GmmFlagsToString(flags),
                                                   " ask for more than the statistics keep (",
                                                   GmmFlagsToString(stats.flags), ")"));
  }
  GMM_RETURN_IF_ERROR(CheckMapOptions(options));
  const int32_t dim = model.dim();
  const GmmModelSpec& prior = model.spec();
  GmmModelSpec spec = prior;
  MapSummary sum;
  // The mean the variance is taken about, kept in double as Kaldi keeps it between the two
  // updates (not rounded to the float the model stores).
  std::vector<double> mean(static_cast<size_t>(dim));
  for (int32_t pdf = 0; pdf < model.num_states(); ++pdf) {
    const double occ_sum = stats.PdfOccupancy(pdf);
    const double weight_norm = occ_sum + options.weight_tau;
    sum.count += occ_sum;
    for (uint32_t g = prior.gauss_begin[pdf]; g < prior.gauss_begin[pdf + 1]; ++g) {
      const double occ = stats.occupancy[g];
      if ((flags & kGmmWeights) && weight_norm > 0.0) {
        spec.weights[g] =
            static_cast<float>((occ + options.weight_tau * double(prior.weights[g])) / weight_norm);
      }
      if (!(occ > 0.0)) continue;  // nothing seen: the prior's mean and variance stand
      const size_t row = size_t(g) * dim;
      for (int32_t d = 0; d < dim; ++d) mean[size_t(d)] = prior.means[row + d];
      if (flags & kGmmMeans) {
        const double norm = occ + options.mean_tau;
        for (int32_t d = 0; d < dim; ++d) {
          mean[size_t(d)] = (stats.first[row + d] + options.mean_tau * mean[size_t(d)]) / norm;
          spec.means[row + d] = static_cast<float>(mean[size_t(d)]);
        }
      }
      if (flags & kGmmVariances) {
        const double data_share = occ / (occ + options.variance_tau);
        const double prior_share = options.variance_tau / (occ + options.variance_tau);
        for (int32_t d = 0; d < dim; ++d) {
          const double m = mean[size_t(d)];
          const double about_mean =
              stats.second[row + d] / occ - 2.0 * m * stats.first[row + d] / occ + m * m;
          spec.variances[row + d] = static_cast<float>(
              data_share * about_mean + prior_share * double(prior.variances[row + d]));
        }
      }
    }
  }
  sum.objective_change = MlObjective(spec, stats) - MlObjective(prior, stats);
  GMM_ASSIGN_OR_RETURN(GmmModel adapted, GmmModel::Create(std::move(spec)));
  if (summary != nullptr) *summary = sum;
  return adapted;
}

}  // namespace gmmscore

#include "train/mle_update.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// The spec without the Gaussians marked, each pdf's remaining weights renormalised.
GmmModelSpec RemoveGaussians(const GmmModelSpec& in, const std::vector<bool>& remove) {
  const size_t dim = size_t(in.dim);
  GmmModelSpec out = in;
  out.weights.clear();
  out.means.clear();
  out.variances.clear();
  out.gauss_begin.assign(1, 0);
  for (size_t pdf = 0; pdf + 1 < in.gauss_begin.size(); ++pdf) {
    const size_t first = out.weights.size();
    double weight_sum = 0.0;
    for (uint32_t g = in.gauss_begin[pdf]; g < in.gauss_begin[pdf + 1]; ++g) {
      if (remove[g]) continue;
      out.weights.push_back(in.weights[g]);
      weight_sum += in.weights[g];
      out.means.insert(out.means.end(), in.means.begin() + ptrdiff_t(g * dim),
                       in.means.begin() + ptrdiff_t((g + 1) * dim));
      out.variances.insert(out.variances.end(), in.variances.begin() + ptrdiff_t(g * dim),
                           in.variances.begin() + ptrdiff_t((g + 1) * dim));
    }
    for (size_t g = first; g < out.weights.size(); ++g) {
      out.weights[g] = static_cast<float>(out.weights[g] / weight_sum);
    }
    out.gauss_begin.push_back(uint32_t(out.weights.size()));
  }
  return out;
}

}  // namespace

std::string GmmRemovalWarning(double prob, double occ, int32_t dim) {
  std::ostringstream s;
  s << "Too little data - removing Gaussian (weight " << std::fixed << prob << ", occupation count "
    << occ << ", vector size " << dim << ")";
  return s.str();
}

std::string GmmKeptWarning(bool removing, int32_t index, double occ, double prob) {
  std::ostringstream s;
  s << "Gaussian has too little data but not removing it because"
    << (removing ? " it is the last Gaussian: i = " : " remove-low-count-gaussians == false: g = ")
    << index << ", occ = " << occ << ", weight = " << prob;
  return s.str();
}

int32_t EstimateGaussian(const MleOptions& options, const GmmStats& stats, uint16_t flags,
                         size_t gauss, double* mean, double* var) {
  if (!(stats.flags & kGmmMeans)) return 0;
  const int32_t dim = stats.dim;
  const size_t row = gauss * size_t(dim);
  // Scaled by 1 / c, as Kaldi scales them.
  const double inv_occ = 1.0 / stats.occupancy[gauss];
  int32_t floored = 0;
  for (int32_t d = 0; d < dim; ++d) {
    const double old_mean = mean[d];
    mean[d] = stats.first[row + d] * inv_occ;
    if (!(stats.flags & kGmmVariances)) continue;
    double v = stats.second[row + d] * inv_occ - mean[d] * mean[d];
    if (!(flags & kGmmMeans)) {  // the variance about the mean that is kept
      const double shift = old_mean - mean[d];
      v += shift * shift;
    }
    const double floor =
        options.variance_floor.empty() ? options.min_variance : options.variance_floor[size_t(d)];
    if (v < floor) {
      v = floor;
      ++floored;
    }
    var[d] = v;
  }
  return floored;
}

absl::StatusOr<std::vector<double>> RelativeVarianceFloor(const GmmStats& stats, double scale) {
  if (!(stats.flags & kGmmVariances)) {
    return absl::InvalidArgumentError(
        "a variance floor relative to the global variance needs variance statistics");
  }
  const int32_t dim = stats.dim;
  std::vector<double> sum(size_t(dim), 0.0), sum_sq(size_t(dim), 0.0);
  const double count = stats.TotalOccupancy();
  if (!(count > 0.0)) {
    return absl::InvalidArgumentError("the statistics have no count to take a global variance of");
  }
  for (size_t g = 0; g < stats.occupancy.size(); ++g) {
    for (int32_t d = 0; d < dim; ++d) {
      sum[size_t(d)] += stats.first[g * dim + d];
      sum_sq[size_t(d)] += stats.second[g * dim + d];
    }
  }
  std::vector<double> floor(static_cast<size_t>(dim));
  for (int32_t d = 0; d < dim; ++d) {
    const double mean = sum[size_t(d)] / count;
    floor[size_t(d)] = scale * std::max(0.0, sum_sq[size_t(d)] / count - mean * mean);
  }
  return floor;
}

double MlObjective(const GmmModelSpec& model, const GmmStats& stats) {
  const int32_t dim = model.dim;
  const double log_2pi = std::log(2.0 * std::numbers::pi);
  double objective = 0.0;
  for (size_t g = 0; g < model.weights.size(); ++g) {
    const double occ = stats.occupancy[g];
    double gconst = std::log(static_cast<double>(model.weights[g])) - 0.5 * dim * log_2pi;
    for (int32_t d = 0; d < dim; ++d) {
      const size_t i = g * dim + d;
      const double mean = model.means[i], var = model.variances[i];
      gconst -= 0.5 * (std::log(var) + mean * mean / var);
      if (stats.flags & kGmmMeans) objective += stats.first[i] * mean / var;
      if (stats.flags & kGmmVariances) objective -= 0.5 * stats.second[i] / var;
    }
    if (occ != 0.0) objective += occ * gconst;
  }
  return objective;
}

absl::StatusOr<GmmModel> MleUpdate(const MleOptions& options, const GmmStats& stats, uint16_t flags,
                                   const GmmModel& model, MleSummary* summary) {
  GMM_RETURN_IF_ERROR(stats.CheckMatches(model));
  if ((flags & (kGmmMeans | kGmmVariances | kGmmWeights) & ~stats.flags) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("update flags ", GmmFlagsToString(flags),
                                                   " ask for more than the statistics keep (",
                                                   GmmFlagsToString(stats.flags), ")"));
  }
  if (!options.variance_floor.empty() && options.variance_floor.size() != size_t(model.dim())) {
    return absl::InvalidArgumentError(absl::StrCat("the variance floor has ",
                                                   options.variance_floor.size(),
                                                   " values, the model dimension ", model.dim()));
  }
  const int32_t dim = model.dim();
  const GmmModelSpec& old = model.spec();
  GmmModelSpec spec = old;
  MleSummary sum;
  std::vector<bool> remove(old.weights.size(), false);
  std::vector<double> mean(static_cast<size_t>(dim)), var(static_cast<size_t>(dim));
  for (int32_t pdf = 0; pdf < model.num_states(); ++pdf) {
    const uint32_t begin = old.gauss_begin[pdf], end = old.gauss_begin[pdf + 1];
    const int32_t num_gauss = int32_t(end - begin);
    const double occ_sum = stats.PdfOccupancy(pdf);
    int32_t removed_here = 0;
    for (uint32_t g = begin; g < end; ++g) {
      const double occ = stats.occupancy[g];
      const double prob = occ_sum > 0.0 ? occ / occ_sum : 1.0 / num_gauss;
      if (!(occ > options.min_gaussian_occupancy && prob > options.min_gaussian_weight)) {
        if (options.remove_low_count_gaussians && removed_here < num_gauss - 1) {
          remove[g] = true;
          ++removed_here;
          sum.warnings.push_back(GmmRemovalWarning(prob, occ, dim));
        } else {
          sum.warnings.push_back(
              GmmKeptWarning(options.remove_low_count_gaussians, int32_t(g - begin), occ, prob));
          if (flags & kGmmWeights) {
            spec.weights[g] = static_cast<float>(std::max(prob, options.min_gaussian_weight));
          }
        }
        continue;
      }
      if (flags & kGmmWeights) spec.weights[g] = static_cast<float>(prob);
      if (!(stats.flags & kGmmMeans)) continue;  // occupancies alone: the weights are all
      const size_t row = size_t(g) * dim;
      std::copy_n(&old.means[row], dim, mean.begin());
      const int32_t floored = EstimateGaussian(options, stats, flags, g, mean.data(), var.data());
      sum.floored_elements += floored;
      if (floored > 0) ++sum.floored_gaussians;
      // The variances formed (and their floors counted) wherever the statistics have them, as
      // Kaldi does; stored only where the flags ask for them.
      if ((stats.flags & kGmmVariances) && (flags & kGmmVariances)) {
        for (int32_t d = 0; d < dim; ++d) spec.variances[row + d] = static_cast<float>(var[d]);
      }
      if (flags & kGmmMeans) {
        for (int32_t d = 0; d < dim; ++d) spec.means[row + d] = static_cast<float>(mean[size_t(d)]);
      }
    }
    sum.count += occ_sum;
    sum.removed_gaussians += removed_here;
  }
  // Measured before Gaussians are removed, as Kaldi measures it.
  sum.objective_change = MlObjective(spec, stats) - MlObjective(old, stats);
  if (sum.removed_gaussians > 0) spec = RemoveGaussians(spec, remove);
  GMM_ASSIGN_OR_RETURN(GmmModel updated, GmmModel::Create(std::move(spec)));
  if (summary != nullptr) *summary = sum;
  return updated;
}

}  // namespace gmmscore

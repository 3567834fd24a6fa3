#include "train/kaldi_form_update.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "util/kaldi_blas.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

absl::Status CheckFits(const GmmStats& stats, const KaldiStoredModel& model) {
  if (!model.has_gmms || size_t(stats.num_pdfs()) != model.pdfs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the statistics have ", stats.num_pdfs(),
                                                   " pdfs, the model ", model.pdfs.size()));
  }
  if (stats.dim != model.dim) {
    return absl::InvalidArgumentError(
        absl::StrCat("the statistics have dimension ", stats.dim, ", the model ", model.dim));
  }
  for (int32_t pdf = 0; pdf < stats.num_pdfs(); ++pdf) {
    if (stats.num_gauss_in(pdf) != model.pdfs[size_t(pdf)].num_gauss()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pdf ", pdf, " has ", stats.num_gauss_in(pdf), " Gaussians in the statistics and ",
          model.pdfs[size_t(pdf)].num_gauss(), " in the model"));
    }
  }
  return absl::OkStatus();
}

// Kaldi's MlObjective of one pdf: the statistics' likelihood terms that depend on the model,
// sum_g c_g gconst_g + first_g . miv_g - 1/2 second_g . iv_g, with the statistics in float.
double KaldiMlObjective(const KaldiStoredGmm& gmm, const GmmStats& stats, uint32_t first_gauss) {
  const int32_t dim = gmm.means_invvars.cols;
  float objective = 0.0f;
  for (int32_t g = 0; g < gmm.num_gauss(); ++g) {
    const size_t row = size_t(first_gauss + uint32_t(g)) * size_t(dim);
    objective += static_cast<float>(stats.occupancy[first_gauss + uint32_t(g)]) * gmm.gconsts[g];
    for (int32_t d = 0; d < dim; ++d) {
      if (stats.flags & kGmmMeans) {
        objective += static_cast<float>(stats.first[row + d]) * gmm.means_invvars.at(g, d);
      }
      if (stats.flags & kGmmVariances) {
        objective -= 0.5f * static_cast<float>(stats.second[row + d]) * gmm.inv_vars.at(g, d);
      }
    }
  }
  return objective;
}

// Removes Gaussian g, renormalising the weights that remain in float (DiagGmm::RemoveComponent).
void RemoveGaussian(KaldiStoredGmm* gmm, int32_t g) {
  const int32_t n = gmm->num_gauss(), dim = gmm->means_invvars.cols;
  gmm->weights.erase(gmm->weights.begin() + g);
  for (Matrix* m : {&gmm->means_invvars, &gmm->inv_vars}) {
    Matrix kept(n - 1, dim);
    for (int32_t i = 0, row = 0; i < n; ++i) {
      if (i == g) continue;
      std::copy_n(&m->at(i, 0), dim, &kept.at(row++, 0));
    }
    *m = std::move(kept);
  }
  float sum = 0.0f;
  for (const float w : gmm->weights) sum += w;
  const float scale = static_cast<float>(1.0 / sum);
  for (float& w : gmm->weights) w *= scale;
}

// MleDiagGmmUpdate on one pdf. Returns the objective change (before removals).
absl::StatusOr<double> UpdatePdf(const MleOptions& options, const GmmStats& stats, uint16_t flags,
                                 int32_t pdf, KaldiStoredGmm* gmm, MleSummary* sum) {
  const uint32_t first = stats.gauss_begin[size_t(pdf)];
  const int32_t num_gauss = gmm->num_gauss(), dim = gmm->means_invvars.cols;
  const double occ_sum = stats.PdfOccupancy(pdf);
  const double objective_before = KaldiMlObjective(*gmm, stats, first);
  std::vector<int32_t> to_remove;
  std::vector<double> mean(static_cast<size_t>(dim)), var(static_cast<size_t>(dim));
  std::vector<double> old_mean;
  KaldiStoredGmm updated = *gmm;
  for (int32_t g = 0; g < num_gauss; ++g) {
    const double occ = stats.occupancy[first + uint32_t(g)];
    const double prob = occ_sum > 0.0 ? occ / occ_sum : 1.0 / num_gauss;
    // The Gaussian in double, as DiagGmmNormal holds it.
    double weight = gmm->weights[size_t(g)];
    for (int32_t d = 0; d < dim; ++d) {
      var[size_t(d)] = 1.0 / static_cast<double>(gmm->inv_vars.at(g, d));
      mean[size_t(d)] = static_cast<double>(gmm->means_invvars.at(g, d)) * var[size_t(d)];
    }
    old_mean = mean;
    if (occ > options.min_gaussian_occupancy && prob > options.min_gaussian_weight) {
      weight = prob;
      const int32_t floored =
          EstimateGaussian(options, stats, flags, first + uint32_t(g), mean.data(), var.data());
      sum->floored_elements += floored;
      if (floored > 0) ++sum->floored_gaussians;
    } else if (options.remove_low_count_gaussians &&
               static_cast<int32_t>(to_remove.size()) < num_gauss - 1) {
      sum->warnings.push_back(GmmRemovalWarning(prob, occ, dim));
      to_remove.push_back(g);
    } else {
      sum->warnings.push_back(GmmKeptWarning(options.remove_low_count_gaussians, g, occ, prob));
      weight = std::max(prob, options.min_gaussian_weight);
    }
    // Back to Kaldi's parameters as CopyToDiagGmm brings them, each where the flags say.
    if (flags & kGmmWeights) updated.weights[size_t(g)] = static_cast<float>(weight);
    for (int32_t d = 0; d < dim; ++d) {
      float& iv = updated.inv_vars.at(g, d);
      float& miv = updated.means_invvars.at(g, d);
      if (flags & kGmmVariances) {
        iv = 1.0f / static_cast<float>(var[size_t(d)]);
        if (!(flags & kGmmMeans)) miv = static_cast<float>(old_mean[size_t(d)]) * iv;
      }
      if (flags & kGmmMeans) miv = static_cast<float>(mean[size_t(d)]) * iv;
    }
  }
  GMM_ASSIGN_OR_RETURN(updated.gconsts,
                       KaldiGconsts(updated.weights, updated.means_invvars, updated.inv_vars));
  const double change = KaldiMlObjective(updated, stats, first) - objective_before;
  // Removed in index order, each removal renormalising (DiagGmm::RemoveComponents).
  for (size_t i = 0; i < to_remove.size(); ++i) {
    RemoveGaussian(&updated, to_remove[i] - static_cast<int32_t>(i));
  }
  if (!to_remove.empty()) {
    GMM_ASSIGN_OR_RETURN(updated.gconsts,
                         KaldiGconsts(updated.weights, updated.means_invvars, updated.inv_vars));
  }
  sum->removed_gaussians += static_cast<int64_t>(to_remove.size());
  sum->count += occ_sum;
  *gmm = std::move(updated);
  return change;
}

}  // namespace

absl::Status MleUpdateKaldiForm(const MleOptions& options, const GmmStats& stats, uint16_t flags,
                                KaldiStoredModel* model, MleSummary* summary) {
  GMM_RETURN_IF_ERROR(CheckFits(stats, *model));
  if ((flags & (kGmmMeans | kGmmVariances | kGmmWeights) & ~stats.flags) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("update flags ", GmmFlagsToString(flags),
                                                   " ask for more than the statistics keep (",
                                                   GmmFlagsToString(stats.flags), ")"));
  }
  if (!options.variance_floor.empty() && options.variance_floor.size() != size_t(model->dim)) {
    return absl::InvalidArgumentError(absl::StrCat("the variance floor has ",
                                                   options.variance_floor.size(),
                                                   " values, the model dimension ", model->dim));
  }
  MleSummary sum;
  for (int32_t pdf = 0; pdf < stats.num_pdfs(); ++pdf) {
    auto change = UpdatePdf(options, stats, flags, pdf, &model->pdfs[size_t(pdf)], &sum);
    if (!change.ok()) {
      return absl::Status(change.status().code(),
                          absl::StrCat("pdf ", pdf, ": ", change.status().message()));
    }
    sum.objective_change += *change;
  }
  if (summary != nullptr) *summary = std::move(sum);
  return absl::OkStatus();
}

absl::Status SplitKaldiForm(const std::vector<int32_t>& targets, float perturb_factor,
                            NormalDraw normal, KaldiStoredModel* model) {
  if (targets.size() != model->pdfs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("splitting needs one target per pdf: ", targets.size(), " for ",
                     model->pdfs.size(), " pdfs"));
  }
  const int32_t dim = model->dim;
  std::vector<float> noise(static_cast<size_t>(dim));
  for (size_t pdf = 0; pdf < targets.size(); ++pdf) {
    KaldiStoredGmm& gmm = model->pdfs[pdf];
    int32_t n = gmm.num_gauss();
    if (n >= targets[pdf]) continue;
    const int32_t target = targets[pdf];
    gmm.weights.resize(size_t(target));
    for (Matrix* m : {&gmm.means_invvars, &gmm.inv_vars}) {
      Matrix grown(target, dim);
      std::copy(m->data.begin(), m->data.end(), grown.data.begin());
      *m = std::move(grown);
    }
    for (; n < target; ++n) {
      // The heaviest Gaussian, the first of equal weights.
      const int32_t from = int32_t(std::max_element(gmm.weights.begin(), gmm.weights.begin() + n) -
                                   gmm.weights.begin());
      gmm.weights[size_t(from)] /= 2;
      gmm.weights[size_t(n)] = gmm.weights[size_t(from)];
      for (int32_t d = 0; d < dim; ++d) {
        noise[size_t(d)] = static_cast<float>(normal()) * std::sqrt(gmm.inv_vars.at(from, d));
      }
      std::copy_n(gmm.inv_vars.row(from), dim, gmm.inv_vars.row(n));
      std::copy_n(gmm.means_invvars.row(from), dim, gmm.means_invvars.row(n));
      // DiagGmm::Split moves the two means apart with AddVec, a BLAS axpy.
      KaldiAxpy(perturb_factor, noise.data(), gmm.means_invvars.row(n), size_t(dim));
      KaldiAxpy(-perturb_factor, noise.data(), gmm.means_invvars.row(from), size_t(dim));
    }
    auto gconsts = KaldiGconsts(gmm.weights, gmm.means_invvars, gmm.inv_vars);
    if (!gconsts.ok()) {
      return absl::Status(gconsts.status().code(),
                          absl::StrCat("pdf ", pdf, ": ", gconsts.status().message()));
    }
    gmm.gconsts = *std::move(gconsts);
  }
  return absl::OkStatus();
}

absl::StatusOr<KaldiMixSummary> MixKaldiForm(const std::vector<float>& occupancies,
                                             const MixDownOptions& down, const MixUpOptions& up,
                                             NormalDraw normal, KaldiStoredModel* model) {
  if (occupancies.size() != model->pdfs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("mixing needs one occupancy per pdf: ", occupancies.size(), " for ",
                     model->pdfs.size(), " pdfs"));
  }
  KaldiMixSummary summary;
  if (down.target != 0) {
    summary.before_down = model->NumGauss();
    GMM_ASSIGN_OR_RETURN(const GmmModel before, StoredToGmmModel(*model, "the model"));
    GMM_ASSIGN_OR_RETURN(const GmmModel merged, MixDown(before, occupancies, down));
    GMM_RETURN_IF_ERROR(StoreChangedPdfs(before, merged, model));
    summary.after_down = model->NumGauss();
  }
  if (up.target != 0) {
    summary.before_up = model->NumGauss();
    GMM_RETURN_IF_ERROR(SplitKaldiForm(SplitTargets(occupancies, up.target, up.power, up.min_count),
                                       up.perturb_factor, normal, model));
    summary.after_up = model->NumGauss();
  }
  return summary;
}

}  // namespace gmmscore

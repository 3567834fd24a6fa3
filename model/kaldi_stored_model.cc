#include "model/kaldi_stored_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace gmmscore {

int64_t KaldiStoredModel::NumGauss() const {
  int64_t n = 0;
  for (const KaldiStoredGmm& gmm : pdfs) n += gmm.num_gauss();
  return n;
}

float KaldiComponentPosteriors(const KaldiStoredGmm& gmm, const float* frame, float* posteriors) {
  const int32_t n = gmm.num_gauss();
  const int32_t dim = gmm.means_invvars.cols;
  for (int32_t g = 0; g < n; ++g) {
    float linear = 0.0f, quadratic = 0.0f;
    for (int32_t d = 0; d < dim; ++d) {
      linear += gmm.means_invvars.at(g, d) * frame[d];
      quadratic += gmm.inv_vars.at(g, d) * (frame[d] * frame[d]);
    }
    posteriors[g] = gmm.gconsts[size_t(g)] + linear - 0.5f * quadratic;
  }
  const float max = *std::max_element(posteriors, posteriors + n);
  float sum = 0.0f;
  for (int32_t g = 0; g < n; ++g) sum += (posteriors[g] = std::exp(posteriors[g] - max));
  const float scale = static_cast<float>(1.0 / sum);
  for (int32_t g = 0; g < n; ++g) posteriors[g] *= scale;
  return max + std::log(sum);
}

absl::StatusOr<std::vector<float>> KaldiGconsts(const std::vector<float>& weights,
                                                const Matrix& means_invvars,
                                                const Matrix& inv_vars) {
  constexpr double kLog2Pi = 1.8378770664093454835606594728112;
  const int32_t dim = means_invvars.cols;
  // As Kaldi: the constant in float, each dimension's term in double added to a float sum.
  const float offset = static_cast<float>(-0.5 * kLog2Pi * dim);
  std::vector<float> gconsts(weights.size());
  for (size_t g = 0; g < weights.size(); ++g) {
    if (weights[g] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Gaussian ", g, ": negative weight ", weights[g]));
    }
    float gc = std::log(weights[g]) + offset;
    for (int32_t d = 0; d < dim; ++d) {
      const float iv = inv_vars.at(int32_t(g), d);
      const double mi = means_invvars.at(int32_t(g), d);
      gc = static_cast<float>(gc + (0.5 * static_cast<double>(std::log(iv)) - 0.5 * mi * mi / iv));
    }
    if (std::isnan(gc)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Gaussian ", g, ": not a number in the gconst computation"));
    }
    gconsts[g] = std::isinf(gc) ? -std::abs(gc) : gc;
  }
  return gconsts;
}

absl::StatusOr<GmmModel> StoredToGmmModel(const KaldiStoredModel& stored, const std::string& name) {
  if (!stored.hmm.has_value() || !stored.has_gmms) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": not a whole model"));
  }
  if (size_t(stored.hmm->NumPdfs()) != stored.pdfs.size()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": the transition model has ",
                                                   stored.hmm->NumPdfs(), " pdfs, the GMMs ",
                                                   stored.pdfs.size()));
  }
  GmmModelSpec spec;
  spec.dim = stored.dim;
  spec.gauss_begin.push_back(0);
  for (size_t pdf = 0; pdf < stored.pdfs.size(); ++pdf) {
    const KaldiStoredGmm& gmm = stored.pdfs[pdf];
    for (size_t i = 0; i < gmm.inv_vars.data.size(); ++i) {
      const double inv_var = gmm.inv_vars.data[i];
      if (!(inv_var > 0.0) || !std::isfinite(inv_var)) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": pdf ", pdf, ", Gaussian ", i / size_t(stored.dim),
                         ": inverse variance ", inv_var, " is not a finite number > 0"));
      }
      spec.means.push_back(static_cast<float>(gmm.means_invvars.data[i] / inv_var));
      spec.variances.push_back(static_cast<float>(1.0 / inv_var));
    }
    spec.weights.insert(spec.weights.end(), gmm.weights.begin(), gmm.weights.end());
    spec.gauss_begin.push_back(static_cast<uint32_t>(spec.weights.size()));
  }
  spec.hmm = *stored.hmm;
  spec.source_format = "kaldi";
  auto model = GmmModel::Create(std::move(spec));
  if (!model.ok()) {
    return absl::Status(model.status().code(), absl::StrCat(name, ": ", model.status().message()));
  }
  return model;
}

namespace {

// One pdf of model in Kaldi's parameters, gconsts computed.
absl::StatusOr<KaldiStoredGmm> StoredGmmOf(const GmmModel& model, int32_t pdf) {
  const int32_t dim = model.dim(), n = model.num_gauss_in(pdf);
  const uint32_t first = model.gauss_begin(pdf);
  KaldiStoredGmm gmm;
  gmm.means_invvars = Matrix(n, dim);
  gmm.inv_vars = Matrix(n, dim);
  for (int32_t g = 0; g < n; ++g) {
    gmm.weights.push_back(model.weight(first + g));
    for (int32_t d = 0; d < dim; ++d) {
      ToKaldiParameters(model.mean(first + g)[d], model.variance(first + g)[d],
                        &gmm.means_invvars.at(g, d), &gmm.inv_vars.at(g, d));
    }
  }
  auto gconsts = KaldiGconsts(gmm.weights, gmm.means_invvars, gmm.inv_vars);
  if (!gconsts.ok()) {
    return absl::Status(gconsts.status().code(),
                        absl::StrCat("pdf ", pdf, ": ", gconsts.status().message()));
  }
  gmm.gconsts = *std::move(gconsts);
  return gmm;
}

}  // namespace

absl::Status StoreChangedPdfs(const GmmModel& before, const GmmModel& after,
                              KaldiStoredModel* stored) {
  for (int32_t pdf = 0; pdf < after.num_states(); ++pdf) {
    const int32_t n = after.num_gauss_in(pdf);
    const uint32_t a0 = after.gauss_begin(pdf), b0 = before.gauss_begin(pdf);
    bool same = n == before.num_gauss_in(pdf);
    for (int32_t g = 0; same && g < n; ++g) {
      same = after.weight(a0 + g) == before.weight(b0 + g) &&
             std::ranges::equal(after.mean(a0 + g), before.mean(b0 + g)) &&
             std::ranges::equal(after.variance(a0 + g), before.variance(b0 + g));
    }
    if (same) continue;
    GMM_ASSIGN_OR_RETURN(stored->pdfs[size_t(pdf)], StoredGmmOf(after, pdf));
  }
  return absl::OkStatus();
}

absl::StatusOr<KaldiStoredModel> GmmModelToStored(const GmmModel& model) {
  KaldiStoredModel stored;
  stored.hmm = model.hmm();
  stored.has_gmms = true;
  stored.dim = model.dim();
  for (int32_t pdf = 0; pdf < model.num_states(); ++pdf) {
    GMM_ASSIGN_OR_RETURN(stored.pdfs.emplace_back(), StoredGmmOf(model, pdf));
  }
  return stored;
}

}  // namespace gmmscore

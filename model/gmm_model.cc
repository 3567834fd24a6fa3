#include "model/gmm_model.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "absl/strings/str_cat.h"

namespace gmmscore {
namespace {

std::string StateLabel(const GmmModelSpec& spec, int32_t state) {
  if (spec.state_names.empty()) return absl::StrCat("state ", state);
  return absl::StrCat("state ", state, " (", spec.state_names[state], ")");
}

absl::Status CheckShape(const GmmModelSpec& spec) {
  if (spec.dim < 1) return absl::InvalidArgumentError(absl::StrCat("dimension ", spec.dim, " < 1"));
  if (spec.gauss_begin.size() < 2) return absl::InvalidArgumentError("model has no states");
  if (spec.gauss_begin.front() != 0) {
    return absl::InvalidArgumentError("Gaussian ranges must start at 0");
  }
  const size_t num_gauss = spec.weights.size();
  for (size_t s = 0; s + 1 < spec.gauss_begin.size(); ++s) {
    if (spec.gauss_begin[s + 1] <= spec.gauss_begin[s]) {
      return absl::InvalidArgumentError(
          absl::StrCat(StateLabel(spec, static_cast<int32_t>(s)), " has no Gaussians"));
    }
  }
  if (spec.gauss_begin.back() != num_gauss) {
    return absl::InvalidArgumentError("Gaussian ranges do not cover the weights");
  }
  const size_t values = num_gauss * static_cast<size_t>(spec.dim);
  if (spec.means.size() != values || spec.variances.size() != values) {
    return absl::InvalidArgumentError("means or variances do not match Gaussians x dimension");
  }
  if (!spec.state_names.empty() && spec.state_names.size() + 1 != spec.gauss_begin.size()) {
    return absl::InvalidArgumentError("state names do not match the number of states");
  }
  if (!(spec.variance_floor >= 0.0f) || !std::isfinite(spec.variance_floor)) {
    return absl::InvalidArgumentError(
        absl::StrCat("variance floor ", spec.variance_floor, " is not a finite number >= 0"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GmmModel> GmmModel::Create(GmmModelSpec spec) {
  if (absl::Status s = CheckShape(spec); !s.ok()) return s;
  const int32_t dim = spec.dim;
  const int32_t num_states = static_cast<int32_t>(spec.gauss_begin.size()) - 1;
  for (int32_t s = 0; s < num_states; ++s) {
    double weight_sum = 0.0;
    for (uint32_t g = spec.gauss_begin[s]; g < spec.gauss_begin[s + 1]; ++g) {
      const float w = spec.weights[g];
      const uint32_t local = g - spec.gauss_begin[s];
      if (!std::isfinite(w) || w < 0.0f) {
        return absl::InvalidArgumentError(absl::StrCat(StateLabel(spec, s), ", Gaussian ", local,
                                                       ": weight ", w, " is not >= 0"));
      }
      weight_sum += w;
      for (int32_t d = 0; d < dim; ++d) {
        const size_t i = size_t(g) * dim + d;
        const float mean = spec.means[i];
        float& var = spec.variances[i];
        if (!std::isfinite(mean)) {
          return absl::InvalidArgumentError(absl::StrCat(StateLabel(spec, s), ", Gaussian ", local,
                                                         ", dimension ", d, ": mean ", mean,
                                                         " is not finite"));
        }
        if (!std::isfinite(var) || var <= 0.0f) {
          return absl::InvalidArgumentError(absl::StrCat(StateLabel(spec, s), ", Gaussian ", local,
                                                         ", dimension ", d, ": variance ", var,
                                                         " is not a finite number > 0"));
        }
        var = std::max(var, spec.variance_floor);
      }
    }
    // Weights need not sum to 1: Kaldi scores them as given, and gmm-boost-silence scales the
    // silence states' weights (--boost-silence 1.25 in the WSJ and LibriSpeech recipes). A state
    // whose every weight is 0 (or whose sum overflows) can never score, and is refused.
    if (!(weight_sum > 0.0) || !std::isfinite(weight_sum)) {
      return absl::InvalidArgumentError(absl::StrCat(StateLabel(spec, s), ": weights sum to ",
                                                     weight_sum, ", not a finite number > 0"));
    }
  }

  GmmModel model;
  model.spec_ = std::move(spec);
  const GmmModelSpec& m = model.spec_;
  const size_t num_gauss = m.weights.size();
  model.gconst_.resize(num_gauss);
  model.mean_invvar_.resize(num_gauss * dim);
  model.neg_half_invvar_.resize(num_gauss * dim);
  const double log_2pi = std::log(2.0 * std::numbers::pi);
  for (size_t g = 0; g < num_gauss; ++g) {
    double k = model.log_weight(static_cast<int64_t>(g)) - 0.5 * dim * log_2pi;
    for (int32_t d = 0; d < dim; ++d) {
      const size_t i = g * dim + d;
      const double mean = m.means[i];
      const double var = m.variances[i];
      k -= 0.5 * (std::log(var) + mean * mean / var);
      model.mean_invvar_[i] = static_cast<float>(mean / var);
      model.neg_half_invvar_[i] = static_cast<float>(-0.5 / var);
    }
    model.gconst_[g] = k;
  }
  return model;
}

double GmmModel::log_weight(int64_t g) const {
  const float w = spec_.weights[g];
  return w > 0.0f ? std::log(static_cast<double>(w)) : -std::numeric_limits<double>::infinity();
}

int32_t GmmModel::min_gauss_per_state() const {
  int32_t n = num_gauss_in(0);
  for (int32_t s = 1; s < num_states(); ++s) n = std::min(n, num_gauss_in(s));
  return n;
}

int32_t GmmModel::max_gauss_per_state() const {
  int32_t n = num_gauss_in(0);
  for (int32_t s = 1; s < num_states(); ++s) n = std::max(n, num_gauss_in(s));
  return n;
}

int64_t GmmModel::host_bytes() const {
  const int64_t g = num_gauss();
  return g * dim() * 4 * int64_t(sizeof(float)) + g * int64_t(sizeof(float) + sizeof(double)) +
         int64_t(spec_.gauss_begin.size() * sizeof(uint32_t));
}

}  // namespace gmmscore

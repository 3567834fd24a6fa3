#include "train/mix_down.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "train/mix_up.h"

namespace gmmscore {
namespace {

// One pdf's Gaussians while they merge, a row of dim values per Gaussian; moments holds
// s = var + mu^2, kept as pooled rather than recomputed from var and mu.
struct Mixture {
  size_t dim = 0;
  std::vector<float> weights, means, variances, moments;
};

Mixture PdfMixture(const GmmModelSpec& spec, int32_t pdf) {
  const size_t dim = size_t(spec.dim), begin = spec.gauss_begin[size_t(pdf)],
               end = spec.gauss_begin[size_t(pdf) + 1];
  Mixture mix{
      .dim = dim,
      .weights = {spec.weights.begin() + ptrdiff_t(begin), spec.weights.begin() + ptrdiff_t(end)},
      .means = {spec.means.begin() + ptrdiff_t(begin * dim),
                spec.means.begin() + ptrdiff_t(end * dim)},
      .variances = {spec.variances.begin() + ptrdiff_t(begin * dim),
                    spec.variances.begin() + ptrdiff_t(end * dim)}};
  mix.moments.resize(mix.means.size());
  for (size_t i = 0; i < mix.means.size(); ++i) {
    mix.moments[i] = mix.variances[i] + mix.means[i] * mix.means[i];
  }
  return mix;
}

// L(var) = -1/2 sum_d log var_d.
float HalfLogDet(const float* var, size_t dim) {
  float sum = 0.0f;
  for (size_t d = 0; d < dim; ++d) sum -= 0.5f * std::log(var[d]);
  return sum;
}

// Gaussians a and b pooled as Kaldi pools them, (x_a + (w_b / w_a) x_b) (w_a / w): the mean and
// s into mean and moment, the variance into var (which may be a's own rows).
void Pool(const Mixture& mix, size_t a, size_t b, float* mean, float* moment, float* var) {
  const float wa = mix.weights[a], wb = mix.weights[b], ratio = wb / wa, scale = wa / (wa + wb);
  for (size_t d = 0; d < mix.dim; ++d) {
    mean[d] = (mix.means[a * mix.dim + d] + ratio * mix.means[b * mix.dim + d]) * scale;
    moment[d] = (mix.moments[a * mix.dim + d] + ratio * mix.moments[b * mix.dim + d]) * scale;
    var[d] = moment[d] - mean[d] * mean[d];
  }
}

// All Gaussians into one (DiagGmm::Merge's target of 1).
void PoolAll(Mixture& mix) {
  const size_t dim = mix.dim;
  float total = 0.0f;
  std::vector<float> mean(dim, 0.0f), moment(dim, 0.0f), var(dim);
  for (size_t g = 0; g < mix.weights.size(); ++g) {
    total += mix.weights[g];
    for (size_t d = 0; d < dim; ++d) {
      mean[d] += mix.weights[g] * mix.means[g * dim + d];
      moment[d] += mix.weights[g] * mix.moments[g * dim + d];
    }
  }
  for (size_t d = 0; d < dim; ++d) {
    mean[d] /= total;
    moment[d] /= total;
    var[d] = moment[d] - mean[d] * mean[d];
  }
  const bool near_one = std::abs(total - 1.0f) <= 1.0e-6f * (std::abs(total) + 1.0f);
  mix.weights.assign(1, near_one ? total : 1.0f);
  mix.means = std::move(mean);
  mix.moments = std::move(moment);
  mix.variances = std::move(var);
}

// Pair by pair, the cheapest first, down to target >= 2 Gaussians.
absl::Status MergePairs(Mixture& mix, size_t target) {
  const size_t n = mix.weights.size(), dim = mix.dim;
  std::vector<float> half_logdet(n), mean(dim), moment(dim), var(dim);
  for (size_t g = 0; g < n; ++g) half_logdet[g] = HalfLogDet(&mix.variances[g * dim], dim);
  // cost[a * n + b] == cost[b * n + a]: the likelihood change of merging a and b.
  std::vector<float> cost(n * n);
  const auto set_cost = [&](size_t a, size_t b) {
    Pool(mix, a, b, mean.data(), moment.data(), var.data());
    const float wa = mix.weights[a], wb = mix.weights[b];
    cost[a * n + b] = cost[b * n + a] =
        (wa + wb) * HalfLogDet(var.data(), dim) - wa * half_logdet[a] - wb * half_logdet[b];
  };
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = 0; b < a; ++b) set_cost(a, b);
  }
  std::vector<bool> dropped(n, false);
  for (size_t left = n; left > target; --left) {
    float best = -std::numeric_limits<float>::max();
    size_t keep = n, drop = n;
    for (size_t a = 0; a < n; ++a) {
      if (dropped[a]) continue;
      for (size_t b = 0; b < a; ++b) {
        if (!dropped[b] && cost[a * n + b] > best) {
          best = cost[a * n + b];
          keep = a;
          drop = b;
        }
      }
    }
    if (keep == n) {
      return absl::InvalidArgumentError(
          absl::StrCat("no pair of its ", left,
                       " Gaussians can merge: every merge cost is -inf or not a number"));
    }
    Pool(mix, keep, drop, &mix.means[keep * dim], &mix.moments[keep * dim],
         &mix.variances[keep * dim]);
    mix.weights[keep] += mix.weights[drop];
    half_logdet[keep] = HalfLogDet(&mix.variances[keep * dim], dim);
    dropped[drop] = true;
    for (size_t other = 0; other < n; ++other) {
      if (other != keep && !dropped[other]) set_cost(keep, other);
    }
  }
  // The survivors, in their order.
  const auto compact = [&](std::vector<float>& rows, size_t width) {
    size_t to = 0;
    for (size_t g = 0; g < n; ++g) {
      if (dropped[g]) continue;
      std::copy_n(rows.begin() + ptrdiff_t(g * width), width, rows.begin() + ptrdiff_t(to * width));
      ++to;
    }
    rows.resize(to * width);
  };
  compact(mix.weights, 1);
  compact(mix.means, dim);
  compact(mix.variances, dim);
  compact(mix.moments, dim);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GmmModel> MixDown(const GmmModel& model, const std::vector<float>& occupancies,
                                 const MixDownOptions& options) {
  if (occupancies.size() != size_t(model.num_states())) {
    return absl::InvalidArgumentError(
        absl::StrCat("mixing down needs one occupancy per pdf: ", occupancies.size(), " for ",
                     model.num_states(), " pdfs"));
  }
  if (options.target < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("mixing down needs a target of at least 1 Gaussian, not ", options.target));
  }
  return MergePdfs(model,
                   SplitTargets(occupancies, options.target, options.power, options.min_count));
}

absl::StatusOr<GmmModel> MergePdfs(const GmmModel& model, const std::vector<int32_t>& targets) {
  if (targets.size() != size_t(model.num_states())) {
    return absl::InvalidArgumentError(
        absl::StrCat("merging needs one target per pdf: ", targets.size(), " for ",
                     model.num_states(), " pdfs"));
  }
  const GmmModelSpec& in = model.spec();
  GmmModelSpec out = in;
  out.weights.clear();
  out.means.clear();
  out.variances.clear();
  out.gauss_begin.assign(1, 0);
  for (int32_t pdf = 0; pdf < model.num_states(); ++pdf) {
    const int32_t target = targets[size_t(pdf)];
    if (target < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("pdf ", pdf, ": cannot merge to ", target, " Gaussians"));
    }
    Mixture mix = PdfMixture(in, pdf);
    if (mix.weights.size() > size_t(target)) {
      if (target == 1) {
        PoolAll(mix);
      } else if (absl::Status s = MergePairs(mix, size_t(target)); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("pdf ", pdf, ": ", s.message()));
      }
    }
    out.weights.insert(out.weights.end(), mix.weights.begin(), mix.weights.end());
    out.means.insert(out.means.end(), mix.means.begin(), mix.means.end());
    out.variances.insert(out.variances.end(), mix.variances.begin(), mix.variances.end());
    out.gauss_begin.push_back(uint32_t(out.weights.size()));
  }
  return GmmModel::Create(std::move(out));
}

}  // namespace gmmscore

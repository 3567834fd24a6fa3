#include "kernels/cpu/reference_scorer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "absl/strings/str_cat.h"

namespace gmmscore {

double ReferenceStateLogLikelihood(const GmmModel& model, int32_t state, const float* frame) {
  const int32_t dim = model.dim();
  const double log_2pi = std::log(2.0 * std::numbers::pi);
  const int32_t n = model.num_gauss_in(state);
  std::vector<double> terms(n);
  double best = -std::numeric_limits<double>::infinity();
  for (int32_t i = 0; i < n; ++i) {
    const int64_t g = model.gauss_begin(state) + i;
    const auto mean = model.mean(g);
    const auto var = model.variance(g);
    double quad = 0.0, log_det = 0.0;
    for (int32_t d = 0; d < dim; ++d) {
      const double diff = double(frame[d]) - double(mean[d]);
      quad += diff * diff / double(var[d]);
      log_det += std::log(double(var[d]));
    }
    terms[i] = model.log_weight(g) - 0.5 * (dim * log_2pi + log_det + quad);
    best = std::max(best, terms[i]);
  }
  if (std::isinf(best)) return best;
  double sum = 0.0;
  for (double t : terms) sum += std::exp(t - best);
  return best + std::log(sum);
}

std::vector<double> ReferenceScores(const GmmModel& model, const Matrix& feats) {
  std::vector<double> out(size_t(feats.rows) * model.num_states());
  for (int32_t t = 0; t < feats.rows; ++t) {
    for (int32_t s = 0; s < model.num_states(); ++s) {
      out[size_t(t) * model.num_states() + s] = ReferenceStateLogLikelihood(model, s, feats.row(t));
    }
  }
  return out;
}

absl::Status ReferenceScorer::Score(const Matrix& feats, Matrix* out) const {
  if (feats.cols != model_.dim()) {
    return absl::InvalidArgumentError(
        absl::StrCat("features have dimension ", feats.cols, ", the model ", model_.dim()));
  }
  const std::vector<double> scores = ReferenceScores(model_, feats);
  out->Resize(feats.rows, model_.num_states());
  std::transform(scores.begin(), scores.end(), out->data.begin(),
                 [](double x) { return static_cast<float>(x); });
  return absl::OkStatus();
}

}  // namespace gmmscore

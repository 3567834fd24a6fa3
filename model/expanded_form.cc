#include "model/expanded_form.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace gmmscore {

std::vector<float> MeanOfMeans(const GmmModel& model) {
  std::vector<double> sum(size_t(model.dim()), 0.0);
  for (int64_t g = 0; g < model.num_gauss(); ++g) {
    const auto mean = model.mean(g);
    for (int32_t d = 0; d < model.dim(); ++d) sum[size_t(d)] += mean[d];
  }
  std::vector<float> shift(size_t(model.dim()));
  for (int32_t d = 0; d < model.dim(); ++d) {
    shift[size_t(d)] = static_cast<float>(sum[size_t(d)] / double(model.num_gauss()));
  }
  return shift;
}

double CancellingMagnitude(const GmmModel& model, int64_t gauss, std::span<const float> shift) {
  const auto mean = model.mean(gauss);
  const auto var = model.variance(gauss);
  double c = 0.0;
  for (int32_t d = 0; d < model.dim(); ++d) {
    const double m = double(mean[d]) - double(shift[size_t(d)]);
    c += 0.5 * m * m / double(var[d]);
  }
  return c;
}

double ExpandGaussian(const GmmModel& model, int64_t gauss, std::span<const float> shift,
                      double scale, float* u, float* v) {
  const auto mean = model.mean(gauss);
  const auto var = model.variance(gauss);
  double k = model.log_weight(gauss) - 0.5 * model.dim() * std::log(2.0 * std::numbers::pi);
  double c = 0.0;
  for (int32_t d = 0; d < model.dim(); ++d) {
    const double m = double(mean[d]) - double(shift[size_t(d)]);
    const double variance = var[d];
    k -= 0.5 * std::log(variance);
    c += 0.5 * m * m / variance;
    u[d] = static_cast<float>(scale * m / variance);
    v[d] = static_cast<float>(scale * -0.5 / variance);
  }
  return c > kOutlierCancellation ? -HUGE_VAL : k - c;
}

double DirectConstant(const GmmModel& model, int64_t gauss) {
  const auto var = model.variance(gauss);
  double l = model.log_weight(gauss) - 0.5 * model.dim() * std::log(2.0 * std::numbers::pi);
  for (int32_t d = 0; d < model.dim(); ++d) l -= 0.5 * std::log(double(var[d]));
  return l;
}

std::vector<StateGuard> StateGuards(const GmmModel& model, std::span<const float> shift) {
  std::vector<StateGuard> guards(size_t(model.num_states()));
  for (int32_t s = 0; s < model.num_states(); ++s) {
    double c_max = 0.0, l_max = -HUGE_VAL, abs_l_max = 0.0;
    for (int64_t g = model.gauss_begin(s); g < model.gauss_end(s); ++g) {
      const double l = DirectConstant(model, g);
      if (std::isinf(l)) continue;  // zero weight: never part of a score
      if (const double c = CancellingMagnitude(model, g, shift); c <= kOutlierCancellation) {
        c_max = std::max(c_max, c);
      }
      l_max = std::max(l_max, l);
      abs_l_max = std::max(abs_l_max, std::abs(l));
    }
    // Rounded up, so that the float bound stays a bound.
    guards[size_t(s)] = {.c_max = std::nextafter(float(c_max), HUGE_VALF),
                         .l_max = std::nextafter(float(l_max), HUGE_VALF),
                         .abs_l_max = std::nextafter(float(abs_l_max), HUGE_VALF)};
  }
  return guards;
}

Outliers FindOutliers(const GmmModel& model, std::span<const float> shift) {
  Outliers outliers;
  outliers.state_begin.push_back(0);
  for (int32_t s = 0; s < model.num_states(); ++s) {
    for (int64_t g = model.gauss_begin(s); g < model.gauss_end(s); ++g) {
      if (!std::isinf(DirectConstant(model, g)) &&
          CancellingMagnitude(model, g, shift) > kOutlierCancellation) {
        outliers.gauss.push_back(g);
      }
    }
    outliers.state_begin.push_back(uint32_t(outliers.gauss.size()));
  }
  return outliers;
}

void AppendDirectForm(const GmmModel& model, int64_t gauss, std::vector<float>* params,
                      std::vector<float>* lconst) {
  const auto mean = model.mean(gauss);
  params->insert(params->end(), mean.begin(), mean.end());
  for (const float var : model.variance(gauss)) {
    params->push_back(static_cast<float>(-0.5 / double(var)));
  }
  lconst->push_back(static_cast<float>(DirectConstant(model, gauss)));
}

}  // namespace gmmscore

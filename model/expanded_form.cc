#include "model/expanded_form.h"

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

double ExpandGaussian(const GmmModel& model, int64_t gauss, std::span<const float> shift,
                      double scale, float* u, float* v) {
  const auto mean = model.mean(gauss);
  const auto var = model.variance(gauss);
  double k = model.log_weight(gauss) - 0.5 * model.dim() * std::log(2.0 * std::numbers::pi);
  for (int32_t d = 0; d < model.dim(); ++d) {
    const double m = double(mean[d]) - double(shift[size_t(d)]);
    const double variance = var[d];
    k -= 0.5 * (std::log(variance) + m * m / variance);
    u[d] = static_cast<float>(scale * m / variance);
    v[d] = static_cast<float>(scale * -0.5 / variance);
  }
  return k;
}

}  // namespace gmmscore

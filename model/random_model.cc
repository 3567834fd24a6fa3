#include "model/random_model.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <utility>
#include <vector>

#include "model/expanded_form.h"

namespace gmmscore {

GmmModel RandomModel(const RandomModelOptions& o, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> gauss_count(o.min_gauss, o.max_gauss);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  GmmModelSpec spec;
  spec.dim = o.dim;
  spec.gauss_begin.push_back(0);
  for (int32_t s = 0; s < o.num_states; ++s) {
    const int32_t n = gauss_count(rng);
    std::vector<float> offset(static_cast<size_t>(o.dim), 0.0f);
    if (o.state_spread > 0.0f) {
      for (float& x : offset) x = o.state_spread * normal(rng);
    }
    std::vector<float> w(static_cast<size_t>(n));
    float total = 0.0f;
    for (float& x : w) total += (x = 0.05f + uniform(rng));
    for (float x : w) spec.weights.push_back(x / total);
    for (int32_t i = 0; i < n * o.dim; ++i) {
      spec.means.push_back(o.mean_offset + offset[size_t(i % o.dim)] + o.mean_scale * normal(rng));
      spec.variances.push_back(o.min_var + (o.max_var - o.min_var) * uniform(rng));
    }
    spec.gauss_begin.push_back(static_cast<uint32_t>(spec.weights.size()));
  }
  spec.hmm = o.hmm;
  spec.source_format = "test";
  return *GmmModel::Create(std::move(spec));
}

Matrix RandomFeatures(int32_t frames, int32_t dim, float offset, float scale, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Matrix m(frames, dim);
  for (float& x : m.data) x = offset + scale * normal(rng);
  return m;
}

Matrix AdversarialFeatures(const GmmModel& model, int32_t frames, uint32_t seed) {
  const int32_t dim = model.dim();
  const std::vector<float> shift = MeanOfMeans(model);
  // Gaussians by their distance from the shift in their own standard deviations, farthest first.
  std::vector<std::pair<double, int64_t>> by_distance;
  for (int64_t g = 0; g < model.num_gauss(); ++g) {
    by_distance.emplace_back(CancellingMagnitude(model, g, shift), g);
  }
  const size_t far_count = std::max<size_t>(1, by_distance.size() / 100);
  std::partial_sort(by_distance.begin(), by_distance.begin() + far_count, by_distance.end(),
                    std::greater<>());

  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::uniform_int_distribution<size_t> far_gauss(0, far_count - 1);
  std::uniform_int_distribution<int64_t> any_gauss(0, model.num_gauss() - 1);
  std::uniform_int_distribution<int32_t> any_dim(0, dim - 1);
  Matrix m(frames, dim);
  for (int32_t t = 0; t < frames; ++t) {
    const int kind = t % 4;
    const int64_t g = kind < 2 ? by_distance[far_gauss(rng)].second : any_gauss(rng);
    const auto mean = model.mean(g);
    const auto var = model.variance(g);
    const double out = 1.2 + 1.8 * uniform(rng);
    const double sigmas = 5.0 + 15.0 * uniform(rng);
    const int32_t moved_dim = any_dim(rng);
    for (int32_t d = 0; d < dim; ++d) {
      const double sd = std::sqrt(double(var[d]));
      double x = mean[d];
      switch (kind) {
        case 0:
          x += sd * normal(rng);
          break;
        case 1:
          x = shift[size_t(d)] + out * (double(mean[d]) - shift[size_t(d)]);
          break;
        case 2:
          x += sd * (d == moved_dim ? (uniform(rng) < 0.5 ? -1 : 1) * (20 + 40 * uniform(rng))
                                    : normal(rng));
          break;
        default:
          x += sd * sigmas * (uniform(rng) < 0.5 ? -1 : 1);
          break;
      }
      m.at(t, d) = static_cast<float>(x);
    }
  }
  return m;
}

}  // namespace gmmscore

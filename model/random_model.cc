#include "model/random_model.h"

#include <random>
#include <utility>
#include <vector>

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
    std::vector<float> w(static_cast<size_t>(n));
    float total = 0.0f;
    for (float& x : w) total += (x = 0.05f + uniform(rng));
    for (float x : w) spec.weights.push_back(x / total);
    for (int32_t i = 0; i < n * o.dim; ++i) {
      spec.means.push_back(o.mean_offset + o.mean_scale * normal(rng));
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

}  // namespace gmmscore

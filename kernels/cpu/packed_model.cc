#include "kernels/cpu/packed_model.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/expanded_form.h"

namespace gmmscore {
namespace {

// Dummy Gaussians that pad a tile to whole groups: never read by the log-add.
constexpr float kPadGconst = -1e30f;

int32_t RoundUpToGroup(int32_t n) { return (n + kGaussGroup - 1) / kGaussGroup * kGaussGroup; }

}  // namespace

CpuPackedModel::CpuPackedModel(const GmmModel& model)
    : dim_(model.dim()),
      num_states_(model.num_states()),
      shift_(MeanOfMeans(model)),
      guards_(StateGuards(model, shift_)) {
  const int32_t dim = dim_;

  // Tiles: consecutive whole states, about kTileGauss Gaussians each.
  int64_t packed = 0;
  for (int32_t s = 0; s < num_states_;) {
    CpuTile tile;
    tile.first_state = s;
    tile.first_gauss = packed;
    int32_t gauss = 0;
    tile.local_offset = static_cast<int32_t>(local_begin_.size());
    do {
      local_begin_.push_back(static_cast<uint32_t>(gauss));
      gauss += model.num_gauss_in(s);
      ++s;
    } while (s < num_states_ && gauss + model.num_gauss_in(s) <= kTileGauss);
    local_begin_.push_back(static_cast<uint32_t>(gauss));
    tile.num_states = s - tile.first_state;
    tile.num_groups = RoundUpToGroup(gauss) / kGaussGroup;
    packed += int64_t(tile.num_groups) * kGaussGroup;
    max_tile_gauss_ = std::max(max_tile_gauss_, tile.num_groups * kGaussGroup);
    max_tile_states_ = std::max(max_tile_states_, tile.num_states);
    tiles_.push_back(tile);
  }

  const size_t group_floats = size_t(dim) * 2 * kGaussGroup;
  params_ = AllocateAlignedFloats(size_t(packed / kGaussGroup) * group_floats);
  std::fill_n(params_.get(), size_t(packed / kGaussGroup) * group_floats, 0.0f);
  gconst_.assign(size_t(packed), kPadGconst);
  lconst_.assign(size_t(packed), double(kPadGconst));
  state_first_gauss_.resize(size_t(num_states_));
  state_num_gauss_.resize(size_t(num_states_));
  std::vector<float> u(static_cast<size_t>(dim)), v(static_cast<size_t>(dim));
  const Outliers outliers = FindOutliers(model, shift_);
  outlier_state_begin_.push_back(0);
  for (CpuTile& tile : tiles_) {
    tile.first_outlier = static_cast<int32_t>(outlier_state_.size());
    for (int32_t s = tile.first_state; s < tile.first_state + tile.num_states; ++s) {
      for (uint32_t i = outliers.state_begin[size_t(s)]; i < outliers.state_begin[size_t(s) + 1];
           ++i) {
        AppendDirectForm(model, outliers.gauss[i], &outlier_params_, &outlier_lconst_);
        outlier_state_.push_back(s - tile.first_state);
      }
      outlier_state_begin_.push_back(static_cast<int32_t>(outlier_state_.size()));
    }
    tile.num_outliers = static_cast<int32_t>(outlier_state_.size()) - tile.first_outlier;
    int64_t g_packed = tile.first_gauss;
    const int64_t first = model.gauss_begin(tile.first_state);
    const int64_t last = model.gauss_end(tile.first_state + tile.num_states - 1);
    for (int32_t s = tile.first_state; s < tile.first_state + tile.num_states; ++s) {
      state_first_gauss_[size_t(s)] = g_packed + (model.gauss_begin(s) - first);
      state_num_gauss_[size_t(s)] = model.num_gauss_in(s);
    }
    for (int64_t g = first; g < last; ++g, ++g_packed) {
      float* group = params_.get() + size_t(g_packed / kGaussGroup) * group_floats;
      const int32_t lane = static_cast<int32_t>(g_packed % kGaussGroup);
      const double k = ExpandGaussian(model, g, shift_, 1.0, u.data(), v.data());
      for (int32_t d = 0; d < dim; ++d) {
        group[d * 2 * kGaussGroup + lane] = u[size_t(d)];
        group[d * 2 * kGaussGroup + kGaussGroup + lane] = v[size_t(d)];
      }
      gconst_[g_packed] = std::isinf(k) ? kPadGconst : static_cast<float>(k);
      const double l = DirectConstant(model, g);
      lconst_[g_packed] = std::isinf(l) ? double(kPadGconst) : l;
    }
  }
}

double CpuPackedModel::DirectStateScore(int32_t state, const float* frame) const {
  std::vector<double> scores;
  // The expanded form's Gaussians, mu' = -u / 2v recovered from the layout: relative error 2u in
  // mu', which costs at most 4u sqrt(r c) nats with c <= kOutlierCancellation.
  const int64_t first = state_first_gauss_[size_t(state)];
  for (int64_t g = first; g < first + state_num_gauss_[size_t(state)]; ++g) {
    if (gconst_[size_t(g)] == kPadGconst) continue;  // an outlier or a zero weight
    const float* group = group_params(g - g % kGaussGroup);
    const int32_t lane = int32_t(g % kGaussGroup);
    double quad = 0.0;
    for (int32_t d = 0; d < dim_; ++d) {
      const double u = group[d * 2 * kGaussGroup + lane];
      const double v = group[d * 2 * kGaussGroup + kGaussGroup + lane];
      const double diff = (double(frame[d]) - double(shift_[size_t(d)])) + u / (2.0 * v);
      quad += v * diff * diff;
    }
    scores.push_back(lconst_[size_t(g)] + quad);
  }
  // The outliers, from their own exact parameters.
  for (int32_t o = outlier_state_begin_[size_t(state)]; o < outlier_state_begin_[size_t(state) + 1];
       ++o) {
    const float* mu = outlier_params_.data() + size_t(o) * 2 * dim_;
    double quad = 0.0;
    for (int32_t d = 0; d < dim_; ++d) {
      const double diff = double(frame[d]) - double(mu[d]);
      quad += double(mu[dim_ + d]) * diff * diff;
    }
    scores.push_back(double(outlier_lconst_[size_t(o)]) + quad);
  }
  if (scores.empty()) return kPadGconst;
  const double best = *std::max_element(scores.begin(), scores.end());
  double sum = 0.0;
  for (double x : scores) sum += std::exp(x - best);
  return best + std::log(sum);
}

}  // namespace gmmscore

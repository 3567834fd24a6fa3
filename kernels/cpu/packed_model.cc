#include "kernels/cpu/packed_model.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace gmmscore {
namespace {

// Dummy Gaussians that pad a tile to whole groups: never read by the log-add.
constexpr float kPadGconst = -1e30f;

int32_t RoundUpToGroup(int32_t n) { return (n + kGaussGroup - 1) / kGaussGroup * kGaussGroup; }

}  // namespace

CpuPackedModel::CpuPackedModel(const GmmModel& model)
    : dim_(model.dim()), num_states_(model.num_states()), shift_(model.dim(), 0.0f) {
  const int32_t dim = dim_;
  // Per-dimension shift: the mean of all Gaussian means.
  std::vector<double> sum(dim, 0.0);
  for (int64_t g = 0; g < model.num_gauss(); ++g) {
    const auto mean = model.mean(g);
    for (int32_t d = 0; d < dim; ++d) sum[d] += mean[d];
  }
  for (int32_t d = 0; d < dim; ++d)
    shift_[d] = static_cast<float>(sum[d] / double(model.num_gauss()));

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
  params_ = hwy::AllocateAligned<float>(size_t(packed / kGaussGroup) * group_floats);
  std::fill_n(params_.get(), size_t(packed / kGaussGroup) * group_floats, 0.0f);
  gconst_.assign(size_t(packed), kPadGconst);
  const double log_2pi = std::log(2.0 * std::numbers::pi);
  for (const CpuTile& tile : tiles_) {
    int64_t g_packed = tile.first_gauss;
    const int64_t first = model.gauss_begin(tile.first_state);
    const int64_t last = model.gauss_end(tile.first_state + tile.num_states - 1);
    for (int64_t g = first; g < last; ++g, ++g_packed) {
      float* group = params_.get() + size_t(g_packed / kGaussGroup) * group_floats;
      const int32_t lane = static_cast<int32_t>(g_packed % kGaussGroup);
      const auto mean = model.mean(g);
      const auto var = model.variance(g);
      double k = model.log_weight(g) - 0.5 * dim * log_2pi;
      for (int32_t d = 0; d < dim; ++d) {
        const double m = double(mean[d]) - double(shift_[d]);
        const double v = var[d];
        k -= 0.5 * (std::log(v) + m * m / v);
        group[d * 2 * kGaussGroup + lane] = static_cast<float>(m / v);
        group[d * 2 * kGaussGroup + kGaussGroup + lane] = static_cast<float>(-0.5 / v);
      }
      gconst_[g_packed] = std::isinf(k) ? kPadGconst : static_cast<float>(k);
    }
  }
}

}  // namespace gmmscore

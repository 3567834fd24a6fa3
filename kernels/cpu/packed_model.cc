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
    : dim_(model.dim()), num_states_(model.num_states()), shift_(MeanOfMeans(model)) {
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
  params_ = hwy::AllocateAligned<float>(size_t(packed / kGaussGroup) * group_floats);
  std::fill_n(params_.get(), size_t(packed / kGaussGroup) * group_floats, 0.0f);
  gconst_.assign(size_t(packed), kPadGconst);
  std::vector<float> u(static_cast<size_t>(dim)), v(static_cast<size_t>(dim));
  for (const CpuTile& tile : tiles_) {
    int64_t g_packed = tile.first_gauss;
    const int64_t first = model.gauss_begin(tile.first_state);
    const int64_t last = model.gauss_end(tile.first_state + tile.num_states - 1);
    for (int64_t g = first; g < last; ++g, ++g_packed) {
      float* group = params_.get() + size_t(g_packed / kGaussGroup) * group_floats;
      const int32_t lane = static_cast<int32_t>(g_packed % kGaussGroup);
      const double k = ExpandGaussian(model, g, shift_, 1.0, u.data(), v.data());
      for (int32_t d = 0; d < dim; ++d) {
        group[d * 2 * kGaussGroup + lane] = u[size_t(d)];
        group[d * 2 * kGaussGroup + kGaussGroup + lane] = v[size_t(d)];
      }
      gconst_[g_packed] = std::isinf(k) ? kPadGconst : static_cast<float>(k);
    }
  }
}

}  // namespace gmmscore

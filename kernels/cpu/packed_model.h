// The CPU backend's layout of a model, built once at load: Gaussians in groups of
// kGaussGroup with their u = mu'/var and v = -1/(2 var) interleaved per dimension in the order the
// SIMD kernel reads them, and states gathered into tiles small enough that a tile's scores for a
// block of frames stay in cache.
//
// Accuracy: the expanded form K + sum x u + x^2 v cancels large terms when features and means sit
// far from zero (MFCC c0 around -20, say). Scoring x' = x - c against mu' = mu - c, with c the
// per-dimension mean of all Gaussian means, gives the same likelihood with much smaller terms,
// which keeps float32 within 1e-3 nats of the float64 direct form.
#pragma once

#include <cstdint>
#include <vector>

#include "hwy/aligned_allocator.h"
#include "model/gmm_model.h"

namespace gmmscore {

inline constexpr int32_t kGaussGroup = 4;   // Gaussians scored together (register blocking)
inline constexpr int32_t kFrameBlock = 64;  // frames scored together (SIMD lanes x unroll)
inline constexpr int32_t kTileGauss = 128;  // target Gaussians per tile

struct CpuTile {
  int32_t first_state = 0;
  int32_t num_states = 0;
  int64_t first_gauss = 0;  // packed Gaussian index; a multiple of kGaussGroup
  int32_t num_groups = 0;
  int32_t local_offset = 0;  // index of the tile's num_states + 1 local Gaussian offsets
};

class CpuPackedModel {
 public:
  explicit CpuPackedModel(const GmmModel& model);

  int32_t dim() const { return dim_; }
  int32_t num_states() const { return num_states_; }
  const std::vector<float>& shift() const { return shift_; }
  const std::vector<CpuTile>& tiles() const { return tiles_; }
  // Packed Gaussian range of a state, relative to its tile's first_gauss.
  const uint32_t* local_gauss_begin(const CpuTile& tile) const {
    return &local_begin_[tile.local_offset];
  }
  // [group][dim][u0..u3, v0..v3]
  const float* group_params(int64_t first_gauss) const {
    return params_.get() + first_gauss / kGaussGroup * size_t(dim_) * 2 * kGaussGroup;
  }
  const float* gconst(int64_t first_gauss) const { return gconst_.data() + first_gauss; }
  int32_t max_tile_gauss() const { return max_tile_gauss_; }
  int32_t max_tile_states() const { return max_tile_states_; }

 private:
  int32_t dim_;
  int32_t num_states_;
  std::vector<float> shift_;
  std::vector<CpuTile> tiles_;
  std::vector<uint32_t> local_begin_;  // per tile, num_states + 1 offsets into its Gaussians
  hwy::AlignedFreeUniquePtr<float[]> params_;
  std::vector<float> gconst_;
  int32_t max_tile_gauss_ = 0;
  int32_t max_tile_states_ = 0;
};

}  // namespace gmmscore

// The CPU backend's layout of a model, built once at load: Gaussians in groups of
// kGaussGroup with their u = mu'/var and v = -1/(2 var) interleaved per dimension in the order the
// SIMD kernel reads them, and states gathered into tiles small enough that a tile's scores for a
// block of frames stay in cache.
//
// Accuracy: the expanded form K + sum x u + x^2 v cancels large terms when features and means sit
// far from zero (MFCC c0 around -20, say). Scoring x' = x - c against mu' = mu - c, with c the
// per-dimension mean of all Gaussian means, gives the same likelihood with much smaller terms for
// the typical frame. For the rare frame whose terms are still too large (far from c, near a state
// whose means are far from c too), the guard (model/score_guard.h) flags the state's score and
// DirectStateScore recomputes it.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cpu/aligned_floats.h"
#include "model/gmm_model.h"
#include "model/score_guard.h"

namespace gmmscore {

inline constexpr int32_t kGaussGroup = 4;   // Gaussians scored together (register blocking)
inline constexpr int32_t kFrameBlock = 64;  // frames scored together (SIMD lanes x unroll)
inline constexpr int32_t kTileGauss = 128;  // target Gaussians per tile

struct CpuTile {
  int32_t first_state = 0;
  int32_t num_states = 0;
  int64_t first_gauss = 0;  // packed Gaussian index; a multiple of kGaussGroup
  int32_t num_groups = 0;
  int32_t local_offset = 0;   // index of the tile's num_states + 1 local Gaussian offsets
  int32_t first_outlier = 0;  // the tile's outliers (model/expanded_form.h), scored apart
  int32_t num_outliers = 0;
};

// The SIMD kernel's error per unit of c + r (model/score_guard.h): 24 u, u = 2^-24, half as much
// again as the worst the randomized search in cpu_scorer_test finds (docs/ARCHITECTURE.md, "Score
// error model").
inline constexpr float kCpuGuardGamma = 16.0f * 0x1p-24f;

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
  // The tile's outliers, as OutlierBlockJob reads them.
  const float* outlier_params(const CpuTile& tile) const {
    return outlier_params_.data() + size_t(tile.first_outlier) * 2 * dim_;
  }
  const float* outlier_lconst(const CpuTile& tile) const {
    return outlier_lconst_.data() + tile.first_outlier;
  }
  const int32_t* outlier_state(const CpuTile& tile) const {
    return outlier_state_.data() + tile.first_outlier;
  }
  bool has_outliers() const { return !outlier_state_.empty(); }
  const std::vector<StateGuard>& guards() const { return guards_; }
  // The state's log-likelihood for an unshifted frame in the direct form, in double, from the
  // packed parameters (mu' = -u / 2v): what the guard falls back to.
  double DirectStateScore(int32_t state, const float* frame) const;
  int32_t max_tile_gauss() const { return max_tile_gauss_; }
  int32_t max_tile_states() const { return max_tile_states_; }

 private:
  int32_t dim_;
  int32_t num_states_;
  std::vector<float> shift_;
  std::vector<CpuTile> tiles_;
  std::vector<uint32_t> local_begin_;  // per tile, num_states + 1 offsets into its Gaussians
  AlignedFloats params_;
  std::vector<float> gconst_;
  std::vector<double> lconst_;              // per packed Gaussian, L_g (model/expanded_form.h)
  std::vector<int64_t> state_first_gauss_;  // per state, its first packed Gaussian
  std::vector<int32_t> state_num_gauss_;
  std::vector<StateGuard> guards_;
  std::vector<float> outlier_params_;         // [outlier][mu x dim, v x dim], mu not shifted
  std::vector<float> outlier_lconst_;         // L_g
  std::vector<int32_t> outlier_state_;        // tile-local
  std::vector<int32_t> outlier_state_begin_;  // per state and one more: outliers are in state order
  int32_t max_tile_gauss_ = 0;
  int32_t max_tile_states_ = 0;
};

}  // namespace gmmscore

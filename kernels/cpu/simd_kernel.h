// The CPU fast path's inner kernel: one tile of Gaussians against one block of kFrameBlock
// frames, expanded-form dot products vectorised over frames, then the per-state log-add, all in
// cache. Compiled for every SIMD target Highway knows and dispatched at run time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "model/score_guard.h"

namespace gmmscore {

struct TileBlockJob {
  int32_t dim = 0;
  int32_t num_groups = 0;         // groups of kGaussGroup Gaussians in the tile
  const float* params = nullptr;  // [group][dim][u x kGaussGroup, v x kGaussGroup]
  const float* gconst = nullptr;  // [num_groups * kGaussGroup]
  const float* frames = nullptr;  // [dim][x' x kFrameBlock, x'^2 x kFrameBlock], aligned
  float* gauss_scores = nullptr;  // scratch [num_groups * kGaussGroup][kFrameBlock], aligned
  int32_t num_states = 0;
  const uint32_t* state_begin = nullptr;  // num_states + 1 offsets into the tile's Gaussians
  float* state_scores = nullptr;          // out [num_states][kFrameBlock], aligned
};

void ScoreTileBlock(const TileBlockJob& job);

// A tile's outlier Gaussians (model/expanded_form.h) against the same block of frames in the
// direct form, v (x - mu)^2 summed over dimensions plus L, unshifted, each log-added into its
// state's scores. No term is larger than the result, so float32 keeps its relative precision.
struct OutlierBlockJob {
  int32_t dim = 0;
  int32_t num_outliers = 0;
  const float* params = nullptr;         // [outlier][mu x dim, v x dim]
  const float* lconst = nullptr;         // [outlier] L_g
  const int32_t* local_state = nullptr;  // [outlier] the tile's state it belongs to
  const float* frames = nullptr;         // [dim][x x kFrameBlock], not shifted, aligned
  float* state_scores = nullptr;         // in and out, as TileBlockJob::state_scores
};

void ScoreOutlierBlock(const OutlierBlockJob& job);

// The guard (model/score_guard.h) on a block's state scores [num_states][kFrameBlock]: bit f of
// fired[s] set where frame f of state s must be recomputed in the direct form. Returns whether
// any bit is set.
bool GuardTileBlock(const float* state_scores, int32_t num_states, const StateGuard* guards,
                    float gamma, uint64_t* fired);

// The SIMD target the kernels dispatch to on this machine, e.g. "AVX3_ZEN4", "AVX2".
const char* SimdTargetName();

// out[f] = log sum_r exp(rows[r * stride + f]) for f < num_frames: the log-add pass of the
// two-kernel (GEMM, then log-add) path that benchmarks measure against.
void LogAddRows(const float* rows, int32_t num_rows, size_t stride, int32_t num_frames, float* out);

}  // namespace gmmscore

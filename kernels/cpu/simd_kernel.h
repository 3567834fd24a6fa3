// The CPU fast path's inner kernel: one tile of Gaussians against one block of kFrameBlock
// frames, expanded-form dot products vectorised over frames, then the per-state log-add, all in
// cache. Compiled for every SIMD target Highway knows and dispatched at run time.
#pragma once

#include <cstddef>
#include <cstdint>

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

// The SIMD target the kernels dispatch to on this machine, e.g. "AVX3_ZEN4", "AVX2".
const char* SimdTargetName();

// out[f] = log sum_r exp(rows[r * stride + f]) for f < num_frames: the log-add pass of the
// two-kernel (GEMM, then log-add) path that benchmarks measure against.
void LogAddRows(const float* rows, int32_t num_rows, size_t stride, int32_t num_frames, float* out);

}  // namespace gmmscore

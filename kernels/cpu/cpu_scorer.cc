#include "kernels/cpu/cpu_scorer.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/simd_kernel.h"
#include "model/shape_checks.h"

namespace gmmscore {
namespace {

// Frames transposed per block of kFrameBlock: [block][dim][x' (64), x'^2 (64)], zero-padded.
void PrepareFrames(const Matrix& feats, const std::vector<float>& shift, float* blocks) {
  const int32_t dim = feats.cols;
  const int32_t num_blocks = (feats.rows + kFrameBlock - 1) / kFrameBlock;
  const size_t block_floats = size_t(dim) * 2 * kFrameBlock;
  std::fill_n(blocks, num_blocks * block_floats, 0.0f);
  for (int32_t t = 0; t < feats.rows; ++t) {
    float* block = blocks + size_t(t / kFrameBlock) * block_floats;
    const int32_t lane = t % kFrameBlock;
    const float* x = feats.row(t);
    for (int32_t d = 0; d < dim; ++d) {
      const float xs = x[d] - shift[d];
      block[d * 2 * kFrameBlock + lane] = xs;
      block[d * 2 * kFrameBlock + kFrameBlock + lane] = xs * xs;
    }
  }
}

// Frames as they came, transposed the same way for the outlier pass: [block][dim][x (64)].
void PrepareRawFrames(const Matrix& feats, float* blocks) {
  const int32_t dim = feats.cols;
  const size_t block_floats = size_t(dim) * kFrameBlock;
  std::fill_n(blocks, size_t((feats.rows + kFrameBlock - 1) / kFrameBlock) * block_floats, 0.0f);
  for (int32_t t = 0; t < feats.rows; ++t) {
    float* block = blocks + size_t(t / kFrameBlock) * block_floats;
    for (int32_t d = 0; d < dim; ++d) block[d * kFrameBlock + t % kFrameBlock] = feats.at(t, d);
  }
}

}  // namespace

CpuScorer::CpuScorer(const GmmModel& model, int num_threads)
    : packed_(model),
      num_threads_(num_threads > 0 ? num_threads
                                   : std::max(1, int(std::thread::hardware_concurrency()))) {}

absl::Status CpuScorer::Score(const Matrix& feats, Matrix* out) const {
  if (absl::Status s = CheckFeatures(feats, packed_.dim()); !s.ok()) return s;
  const int32_t dim = packed_.dim();
  const int32_t num_states = packed_.num_states();
  out->Resize(feats.rows, num_states);
  if (feats.rows == 0) return absl::OkStatus();

  const int32_t num_blocks = (feats.rows + kFrameBlock - 1) / kFrameBlock;
  const size_t block_floats = size_t(dim) * 2 * kFrameBlock;
  auto frames = AllocateAlignedFloats(num_blocks * block_floats);
  PrepareFrames(feats, packed_.shift(), frames.get());
  AlignedFloats raw_frames;
  if (packed_.has_outliers()) {
    raw_frames = AllocateAlignedFloats(size_t(num_blocks) * dim * kFrameBlock);
    PrepareRawFrames(feats, raw_frames.get());
  }

  const auto& tiles = packed_.tiles();
  const int64_t num_items = int64_t(tiles.size()) * num_blocks;
  const int threads = int(std::min<int64_t>(num_threads_, num_items));
#pragma omp parallel num_threads(threads)
  {
    auto gauss_scores = AllocateAlignedFloats(size_t(packed_.max_tile_gauss()) * kFrameBlock);
    auto state_scores = AllocateAlignedFloats(size_t(packed_.max_tile_states()) * kFrameBlock);
    std::vector<uint64_t> fired(size_t(packed_.max_tile_states()));
    // Items run tile-major so a thread reuses a tile's parameters across frame blocks.
#pragma omp for schedule(dynamic, 4)
    for (int64_t item = 0; item < num_items; ++item) {
      const CpuTile& tile = tiles[item / num_blocks];
      const int32_t block = int32_t(item % num_blocks);
      TileBlockJob job;
      job.dim = dim;
      job.num_groups = tile.num_groups;
      job.params = packed_.group_params(tile.first_gauss);
      job.gconst = packed_.gconst(tile.first_gauss);
      job.frames = frames.get() + size_t(block) * block_floats;
      job.gauss_scores = gauss_scores.get();
      job.num_states = tile.num_states;
      job.state_begin = packed_.local_gauss_begin(tile);
      job.state_scores = state_scores.get();
      ScoreTileBlock(job);
      if (tile.num_outliers > 0) {
        OutlierBlockJob outliers;
        outliers.dim = dim;
        outliers.num_outliers = tile.num_outliers;
        outliers.params = packed_.outlier_params(tile);
        outliers.lconst = packed_.outlier_lconst(tile);
        outliers.local_state = packed_.outlier_state(tile);
        outliers.frames = raw_frames.get() + size_t(block) * dim * kFrameBlock;
        outliers.state_scores = job.state_scores;
        ScoreOutlierBlock(outliers);
      }
      const int32_t first_frame = block * kFrameBlock;
      const int32_t frames_here = std::min(kFrameBlock, feats.rows - first_frame);
      const bool guard_fired =
          guard_gamma_ > 0.0f &&
          GuardTileBlock(state_scores.get(), tile.num_states,
                         packed_.guards().data() + tile.first_state, guard_gamma_, fired.data());
      for (int32_t f = 0; f < frames_here; ++f) {
        float* row = out->row(first_frame + f) + tile.first_state;
        for (int32_t s = 0; s < tile.num_states; ++s) {
          row[s] = state_scores[size_t(s) * kFrameBlock + f];
        }
        if (!guard_fired) continue;
        for (int32_t s = 0; s < tile.num_states; ++s) {
          if ((fired[size_t(s)] >> f) & 1) {
            row[s] =
                float(packed_.DirectStateScore(tile.first_state + s, feats.row(first_frame + f)));
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace gmmscore

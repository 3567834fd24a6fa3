#include <algorithm>

#include "kernels/cuda/common/cuda_status.h"
#include "kernels/cuda/score/score_guard_kernel.h"

namespace gmmscore {
namespace {

constexpr int32_t kGuardThreads = 128;
constexpr int32_t kMaxGuardFrameBlocks = 65535;  // the grid's y dimension; more frames loop
constexpr double kLn2Double = 0.6931471805599453;

// The whole state in the direct form, in double, from the SIMT layout (cuda_packed_model.h):
// mu' = -u / 2v recovered from the log2-scaled u and v (relative error 2u in mu'), plus the
// state's outliers from their own parameters. Rare: only where the guard fires.
__device__ double DirectStateScore(const SimtModelView& model, const GuardModelView& guard,
                                   int32_t state, const float* __restrict__ x) {
  const int32_t slot_id = guard.state_slot[state];
  const int32_t group = slot_id / kGroupStates;
  const int32_t slot = slot_id % kGroupStates;
  const int32_t first_quad = model.group_first_quad[group];
  const float* params = reinterpret_cast<const float*>(model.params);
  double best = -1e300, sum = 0.0;
  const auto add = [&](double score) {
    if (score > best) {
      sum = sum * exp(best - score) + 1.0;
      best = score;
    } else {
      sum += exp(score - best);
    }
  };
  for (int32_t i = 0; i < guard.state_gauss[state]; ++i) {
    const int64_t quad = first_quad + i / kQuadGauss;
    const int32_t in_quad = i % kQuadGauss;
    const float l = guard.lconst[(quad * kQuadGauss + in_quad) * kGroupStates + slot];
    if (l == kPadGconst) continue;
    double quad_term = 0.0;
    for (int32_t d = 0; d < model.dim; ++d) {
      const int64_t word = ((quad * model.chunks + d / 4) * kQuadSlots + in_quad) * kGroupStates;
      const double u = params[(word + slot) * 4 + d % 4];
      const double v = params[(word + kQuadGauss * kGroupStates + slot) * 4 + d % 4];
      const double diff = (double(x[d]) - double(model.shift[d])) + u / (2.0 * v);
      quad_term += v * diff * diff;
    }
    add(double(l) + kLn2Double * quad_term);
  }
  for (int32_t o = guard.outlier_begin[state]; o < guard.outlier_begin[state + 1]; ++o) {
    const float* mu = guard.outlier_params + int64_t(o) * 2 * model.dim;
    double quad_term = 0.0;
    for (int32_t d = 0; d < model.dim; ++d) {
      const double diff = double(x[d]) - double(mu[d]);
      quad_term += double(mu[model.dim + d]) * diff * diff;
    }
    add(double(guard.outlier_lconst[o]) + quad_term);
  }
  return sum > 0.0 ? best + log(sum) : double(kPadGconst);
}

// Block (x, y): kGuardThreads watched states against the frames y, y + gridDim.y, ...
__global__ void GuardScoresKernel(const SimtModelView model, const GuardModelView guard,
                                  const int32_t* __restrict__ watched, const int32_t num_watched,
                                  const float* __restrict__ feats, const int32_t num_frames,
                                  const float gamma, float* __restrict__ out) {
  const int32_t w = int32_t(blockIdx.x) * kGuardThreads + int32_t(threadIdx.x);
  if (w >= num_watched) return;
  const int32_t state = watched[w];
  const int32_t first_outlier = guard.outlier_begin[state];
  const int32_t end_outlier = guard.outlier_begin[state + 1];
  const StateGuard state_guard = guard.guards[state];
  for (int64_t frame = blockIdx.y; frame < num_frames; frame += gridDim.y) {
    const float* x = feats + frame * model.dim;
    float* score_at = out + frame * model.num_states + state;
    float score = *score_at;
    bool changed = false;
    for (int32_t o = first_outlier; o < end_outlier; ++o) {
      // v (x - mu)^2 unshifted: no term is larger than the result.
      const float* mu = guard.outlier_params + int64_t(o) * 2 * model.dim;
      float acc = 0.0f;
      for (int32_t d = 0; d < model.dim; ++d) {
        const float diff = x[d] - mu[d];
        acc = fmaf(diff * diff, mu[model.dim + d], acc);
      }
      const float outlier = acc + guard.outlier_lconst[o];
      score = fmaxf(score, outlier) + log1pf(expf(-fabsf(score - outlier)));
      changed = true;
    }
    if (gamma > 0.0f && GuardFires(state_guard, score, gamma)) {
      score = float(DirectStateScore(model, guard, state, x));
      changed = true;
    }
    if (changed) *score_at = score;
  }
}

}  // namespace

absl::Status GuardScores(const SimtModelView& model, const GuardModelView& guard,
                         const int32_t* watched, int32_t num_watched, const float* feats,
                         int32_t num_frames, float gamma, float* out, cudaStream_t stream) {
  if (num_watched == 0 || num_frames == 0) return absl::OkStatus();
  const dim3 grid((num_watched + kGuardThreads - 1) / kGuardThreads,
                  std::min(num_frames, kMaxGuardFrameBlocks));
  GuardScoresKernel<<<grid, kGuardThreads, 0, stream>>>(model, guard, watched, num_watched, feats,
                                                        num_frames, gamma, out);
  return CudaStatus(cudaGetLastError(), "GuardScoresKernel launch");
}

}  // namespace gmmscore

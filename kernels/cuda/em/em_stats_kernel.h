// The E-step of EM for one diagonal GMM on the GPU (every frame against every Gaussian: a UBM, or
// one pdf's Gaussians), in two launches over a chunk of frames, so that the frames x Gaussians
// posterior matrix never leaves shared memory:
//
//   EmFrameLogLikes   per frame t, lse_t = log sum_g exp(ll_tg), with
//                     ll_tg = c_g - 1/2 sum_d (x_td - mu_gd)^2 / var_gd,
//                     c_g = log w_g - 1/2 (D log 2 pi + sum_d log var_gd)
//                     (the direct form: no term larger than the result, so float32 keeps it);
//                     and sum_t lse_t added to a double.
//   EmStatistics      per Gaussian g: gamma_tg = exp(ll_tg - lse_t) recomputed tile by tile,
//                     and the statistics about the Gaussian's own mean (the shift):
//                       occ_g = sum_t gamma_tg,  s1_gd = sum_t gamma_tg (x_td - mu_gd),
//                       s2_gd = sum_t gamma_tg (x_td - mu_gd)^2,
//                     float32 over a tile of frames, double in shared memory over a block's
//                     frames, added to the double totals with atomics. Centred sums stay small
//                     where x^2 is large and the variance tiny, so the second-order statistic is
//                     never a difference of large float32 numbers; the host turns them into
//                     Kaldi's sums of x and x^2 in double (CudaGmmStatistics).
//
// Dimensions up to kMaxEmDim. C++17.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"

namespace gmmscore {

inline constexpr int32_t kMaxEmDim = 128;

// The GMM on the device, Gaussian-major: mean[g * dim + d], inv_var[g * dim + d], log_norm[g]
// (c_g above). num_gauss padded by the caller to a multiple of kEmGaussPad with Gaussians of
// log_norm -inf (they take no posterior).
struct EmModelView {
  const float* mean = nullptr;
  const float* inv_var = nullptr;
  const float* log_norm = nullptr;
  int32_t num_gauss = 0;  // padded
  int32_t dim = 0;
};

inline constexpr int32_t kEmGaussPad = 64;

// The statistics being accumulated (device, double): occ[num_gauss], s1 and s2 [num_gauss * dim]
// (padded Gaussians included), total_log_like[1].
struct EmStatsView {
  double* occ = nullptr;
  double* s1 = nullptr;
  double* s2 = nullptr;
  double* total_log_like = nullptr;
};

// feats (device): frames x dim, row-major. lse (device): frames. total_log_like may be null (the
// caller log-adds lse with another share of the Gaussians first). Asynchronous on stream.
absl::Status EmFrameLogLikes(const EmModelView& model, const float* feats, int32_t num_frames,
                             float* lse, double* total_log_like, cudaStream_t stream);

// Adds the frames' statistics to stats. `splits` blocks share the frames of each Gaussian tile
// (more blocks than the Gaussians alone give when the GMM is small). Asynchronous on stream.
absl::Status EmStatistics(const EmModelView& model, const float* feats, const float* lse,
                          int32_t num_frames, int32_t splits, const EmStatsView& stats,
                          cudaStream_t stream);

}  // namespace gmmscore

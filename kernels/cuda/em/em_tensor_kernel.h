// The E-step of EM for one diagonal GMM on the tensor cores: the same two passes as
// em_stats_kernel.h (per-frame log-sums, then posteriors recomputed tile by tile and their
// statistics), in float32 accuracy. The log-likelihoods are mma.sync m16n8k16 products of half
// operands split in three (mma_f16.cuh, tensor_f16_kernel.h: parameters scaled by a power of two
// per column of each block, each frame's row by one per frame, hi.hi + (hi.lo + lo.hi) 2^-11);
// the statistics m16n8k8 TF32 products split in three (mma_tf32.cuh). A warp owns 16 Gaussians
// for the whole launch, their parameters in registers, and meets the frames 8 at a time:
//
//   log-likelihoods   LL (16 Gaussians x 8 frames) = C' + A (16 x 2D) . B (2D x 8), in pairs of
//                     chunks of 4 dimensions: A's row g holds the half2 {u_gd, v_gd} of each
//                     dimension, u_gd = (mu_gd - s_d) / var_gd and v_gd = -1/(2 var_gd) times
//                     the column's scale; B's column t the half2 {x'_td, x'_td^2} times the
//                     column's inverse scale and the frame's, x'_td = x_td - s_d, where s is the
//                     block's shift (em_tensor_layout.h); C' holds the rest of the expanded form
//                     as a float pair (hi + lo). u, v and C' are in log2 units (times log2(e)), so
//                     that both kernels' exponentials are one ex2 instruction each.
//   statistics        gamma = 2^(LL - lse_t log2(e)) stays in the registers of the product that
//                     made it: the output fragment of LL is the m16n8k8 A fragment of gamma x
//                     [x', x'^2] (16 Gaussians x 8 frames by 8 frames x 8 columns a chunk) with
//                     the frames of the reduction taken in the order 0 2 4 6 1 3 5 7, so nothing
//                     moves between lanes. Each chunk's products start from zero every 16 frames;
//                     float32 sums over kEmTensorFlushFrames frames, then double in shared memory,
//                     then double atomics.
//
// The log-sums run the other way round (a warp owns 16 frames, the Gaussians stream past
// them a block at a time, each lane keeping running log-sums), so that no lane meets another
// before the end. The statistics' block is kEmTensorWarps warps (kEmTensorBlockGauss Gaussians)
// over a slice of the frames; frames stream through shared memory 32 at a time, converted once
// into the fragments of both products. Statistics are of x' (about the block's shift): occupancy,
// sum gamma x', sum gamma x'^2; the host adds the shift back in double (CudaGmmStatistics).
// Dimensions up to 4 x kEmTensorMaxChunks. C++17.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"

namespace gmmscore {

inline constexpr int32_t kEmTensorWarpGauss = 16;
inline constexpr int32_t kEmTensorWarps = 12;
inline constexpr int32_t kEmTensorBlockGauss = kEmTensorWarpGauss * kEmTensorWarps;
// A warp keeps 4 parameter words a chunk in registers, beside 4 statistics a chunk.
inline constexpr int32_t kEmTensorMaxChunks = 10;
// The log-likelihoods' products take chunks two at a time (k = 16), the last pair padded.
__host__ __device__ inline constexpr int32_t EmTensorPairs(int32_t chunks) {
  return (chunks + 1) / 2;
}
// Frames whose statistics products a thread of the statistics kernel sums in float32 before it
// adds them to its warp's double sums: those flushes (a conversion and a shared-memory addition in
// double a sum) took 8% of the E-step every 256 frames, about 1% every 2048 (docs/PERFORMANCE.md,
// "EM statistics"). 128 float32 additions of a 16-frame product each: at worst 128 roundings of
// 2^-24 of the sum, and they average out over a slice's flushes.
inline constexpr int32_t kEmTensorFlushFrames = 2048;
// C' of padding Gaussians: exp of it (minus any log-likelihood) is 0, and it stays finite.
inline constexpr float kEmTensorPadConst = -1.0e30f;

// Gaussians a record of the log-sums kernel holds: a third of a block (the same shift and column
// scales; the frames' operands are made at the first record of each block).
inline constexpr int32_t kEmTensorRecordGauss = kEmTensorBlockGauss / 3;

// A record of Gaussians as the log-sums kernel stages it, in 16-byte words: B fragments
// [8-Gaussian tile][pair][32 lanes] {b0 hi, b1 hi, b0 lo, b1 lo}, b0 the scaled half2 {u, v} of
// Gaussian 8n + s, dimension 4 (2p) + t, b1 of dimension 4 (2p + 1) + t; then their C' (float2
// each, kEmTensorRecordGauss / 2 words); then their block's shift (8 pairs floats, zero-padded);
// then what the frames' x' and x'^2 are multiplied by (2 x 8 pairs floats: column_scale).
__host__ __device__ inline constexpr int32_t EmTensorLogSumRecordWords(int32_t chunks) {
  return (kEmTensorRecordGauss / 8) * EmTensorPairs(chunks) * 32 + kEmTensorRecordGauss / 2 +
         6 * EmTensorPairs(chunks);
}

// The Gaussians on the device (em_tensor_layout.h builds it), num_gauss padded to a multiple of
// kEmTensorBlockGauss:
//   params        [warp tile][pair][hi, lo][32 lanes] uint4: lane 4s + t's A fragment of the
//                 pair, half2 {u, v} (scaled, split) of the tile's Gaussians s, s + 8 at dimension
//                 4 (2p) + t, then at 4 (2p + 1) + t (zero for padding dimensions and Gaussians);
//   consts        [num_gauss] float2: C' as hi + lo (log2 units, as u and v); hi =
//                 kEmTensorPadConst for padding Gaussians;
//   shift         [num_gauss / kEmTensorBlockGauss][dim];
//   column_scale  [num_gauss / kEmTensorBlockGauss][2][dim]: 2^-s_d, what the frames' x'_d (then
//                 x'_d^2) are multiplied by where the block's u_d (v_d) were scaled by 2^s_d;
//   log_sum_records  [num_gauss / kEmTensorRecordGauss][EmTensorLogSumRecordWords(chunks)].
struct EmTensorModelView {
  const uint4* params = nullptr;
  const uint4* log_sum_records = nullptr;
  const float2* consts = nullptr;
  const float* shift = nullptr;
  const float* column_scale = nullptr;
  int32_t num_gauss = 0;
  int32_t dim = 0;
};

// Statistics columns a Gaussian (device, double, [num_gauss][EmTensorColumns(dim)]): occupancy,
// then sum gamma x'_d for every d, then sum gamma x'_d^2.
__host__ __device__ inline constexpr int32_t EmTensorColumns(int32_t dim) { return 1 + 2 * dim; }

// How many slices of the Gaussians EmTensorLogSums should cut num_frames' work into so that
// every one of `sms` multiprocessors has blocks (1 for long chunks).
int32_t EmTensorLogSumSlices(const EmTensorModelView& model, int32_t num_frames, int32_t sms);

// Log-sums of every frame over each slice of the Gaussians, in log2 units: partial[i * num_frames +
// t] = (max, sum), lse log2(e) = max + log2(sum) over slice i's Gaussians. feats (device):
// num_frames x dim,
// row-major. Asynchronous.
absl::Status EmTensorLogSums(const EmTensorModelView& model, const float* feats, int32_t num_frames,
                             int32_t slices, float2* partial, cudaStream_t stream);

// The log-add of the `num_partials` partial log-sums of frame t (log2 units) and, where
// extra_lse is not null, extra_lse[t] (the exact kernels' share, natural log), in natural log
// (lse[t], for the exact kernels; sum_t lse[t] added to *total_log_like) and in log2 units
// (lse_bits[t], for EmTensorStatistics).
absl::Status EmCombineLogSums(const float2* partial, int32_t num_partials, const float* extra_lse,
                              int32_t num_frames, float* lse, float* lse_bits,
                              double* total_log_like, cudaStream_t stream);

// Adds the frames' statistics (posteriors from lse_bits, log2 units) to sums. Asynchronous.
absl::Status EmTensorStatistics(const EmTensorModelView& model, const float* feats,
                                const float* lse_bits, int32_t num_frames, int32_t splits,
                                double* sums, cudaStream_t stream);

}  // namespace gmmscore

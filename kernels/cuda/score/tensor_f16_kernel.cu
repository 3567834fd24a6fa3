#include <utility>

#include "kernels/cuda/score/mma_f16.cuh"
#include "kernels/cuda/score/row_pipeline.cuh"
#include "kernels/cuda/score/simt_model_view.h"  // kPadGconst
#include "kernels/cuda/score/tensor_f16_kernel.h"

namespace gmmscore {
namespace {

// A register cap of 128 a thread, as for the 3xTF32 kernel; this one needs far fewer (the frames'
// operands take 4 registers a chunk, not 8), and the spare ones keep more products in flight.
constexpr int32_t kMinBlocks = 2;

// A chunk of 8 k is 4 dimensions 4c + t, each as the pair (x', x'^2) at k = 2t, 2t + 1: a lane's
// half2 of the A fragment for one frame, and the half2 {u, v} of the layout for one state. A
// product of k = 16 takes chunks 2p and 2p + 1, so that the frames' registers of a pair form the
// A fragment of all three products (hi.hi, hi.lo, lo.hi) and the layout's word of a pair gives
// their B fragments as aligned register pairs; an odd last chunk takes k = 8 products.
// One block: frame tile blockIdx.x (16 frames a warp), group blockIdx.y, slice blockIdx.z of the
// group's rows; lanes hold frames and states as in the 3xTF32 kernel (tensor_kernel.cu).
template <int kChunks>
__global__ void __launch_bounds__(kTensorMaxThreads, kMinBlocks)
    TensorF16ScoreKernel(const TensorModelView model, const float* __restrict__ feats,
                         const int32_t num_frames, float* __restrict__ out,
                         float* __restrict__ partial) {
  constexpr int32_t kPairs = (kChunks + 1) / 2;
  constexpr int32_t kRowWords = TensorF16RowWords(kChunks);
  constexpr uint32_t kRowBytes = kRowWords * sizeof(uint4);
  extern __shared__ uint4 f16_stages[];
  const int32_t lane = int32_t(threadIdx.x % 32);
  const int32_t s = lane / 4;
  const int32_t t = lane % 4;

  // x' and x'^2 of frame s + 8h, dimension d, times the column's scales; zero for padding.
  const auto scaled_pair = [&](int32_t d, int h) {
    const int64_t frame = WarpFirstFrame() + s + 8 * h;
    if (d >= model.dim || frame >= num_frames) return make_float2(0.0f, 0.0f);
    const float x = feats[frame * model.dim + d] - model.shift[d];
    return make_float2(x * model.column_scale[d], x * x * model.column_scale[model.dim + d]);
  };
  // Each frame's 2^-e, e putting its largest operand (over the 4 lanes t that hold the frame) in
  // [2^14, 2^15), below half precision's largest value after rounding; 2^e scales its sums back.
  float frame_scale[2];
  float frame_down[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float largest = 0.0f;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const float2 x = scaled_pair(4 * c + t, h);
      largest = fmaxf(largest, fmaxf(fabsf(x.x), fabsf(x.y)));
    }
    largest = fmaxf(largest, __shfl_xor_sync(0xffffffffu, largest, 1));
    largest = fmaxf(largest, __shfl_xor_sync(0xffffffffu, largest, 2));
    const int32_t e = FrameExponent(largest);
    frame_scale[h] = PowerOfTwo(e);
    frame_down[h] = PowerOfTwo(-e);
  }
  // The A fragments of pair p: [2 (c - 2p) + h] holds frame s + 8h, chunk c.
  uint32_t a_hi[kPairs][4];
  uint32_t a_lo[kPairs][4];
#pragma unroll
  for (int c = 0; c < 2 * kPairs; ++c) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float2 x = c < kChunks ? scaled_pair(4 * c + t, h) : make_float2(0.0f, 0.0f);
      SplitF16(x.x * frame_down[h], x.y * frame_down[h], a_hi[c / 2][2 * (c % 2) + h],
               a_lo[c / 2][2 * (c % 2) + h]);
    }
  }
  const float corr_scale[2] = {frame_scale[0] / kTensorF16LowScale,
                               frame_scale[1] / kTensorF16LowScale};

  const auto copy_row = [&](uint4* stage, int32_t row_index, uint64_t* barrier) {
    ExpectBytes(barrier, kRowBytes);
    BulkCopy(stage, model.rows_f16 + size_t(row_index) * kRowWords, kRowBytes, barrier);
  };
  float4 log_sums[2];  // running log-sums, a float4 per tile
  log_sums[0] = log_sums[1] = make_float4(kPadGconst, kPadGconst, kPadGconst, kPadGconst);
  const auto score_row = [&](const uint4* stage) {
    const float* k = reinterpret_cast<const float*>(stage + 2 * kPairs * kTensorLanes);
    float total[2][4];
    float corr[2][4] = {};
    StartFromConstants(k, total);
#pragma unroll
    for (int p = 0; p < kPairs; ++p) {
#pragma unroll
      for (int n = 0; n < 2; ++n) {
        // {hi, hi, lo, lo} of chunks 2p, 2p + 1: the B fragments of hi.hi and hi.lo.
        const uint4 b = stage[(2 * p + n) * kTensorLanes + lane];
        // hi.hi from zero, added to the total at the frame's scale; hi.lo + lo.hi accumulated
        // apart across the chunks.
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        const uint32_t(&hi)[4] = a_hi[p];
        const uint32_t(&lo)[4] = a_lo[p];
        if (2 * p + 1 < kChunks) {
          MmaF16(acc, hi[0], hi[1], hi[2], hi[3], b.x, b.y);
          MmaF16(corr[n], hi[0], hi[1], hi[2], hi[3], b.z, b.w);
          MmaF16(corr[n], lo[0], lo[1], lo[2], lo[3], b.x, b.y);
        } else {
          MmaF16K8(acc, hi[0], hi[1], b.x);
          MmaF16K8(corr[n], hi[0], hi[1], b.z);
          MmaF16K8(corr[n], lo[0], lo[1], b.x);
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) total[n][j] = fmaf(acc[j], frame_scale[j / 2], total[n][j]);
      }
    }
#pragma unroll
    for (int n = 0; n < 2; ++n) {
#pragma unroll
      for (int j = 0; j < 4; ++j) total[n][j] = fmaf(corr[n][j], corr_scale[j / 2], total[n][j]);
      log_sums[n] = LogAdd(log_sums[n], total[n]);
    }
  };
  ForEachStagedRow<kRowWords>(f16_stages, RowsOfThisSplit(model.group_first_row), copy_row,
                              score_row);
  StoreLogSums(model, log_sums, num_frames, out, partial);
}

template <size_t... kIndex>
TensorKernelFunction SelectKernel(int32_t chunks, std::index_sequence<kIndex...>) {
  static const TensorKernelFunction kernels[] = {&TensorF16ScoreKernel<int(kIndex) + 1>...};
  return kernels[chunks - 1];
}

}  // namespace

TensorKernelFunction TensorF16KernelFor(int32_t chunks) {
  return SelectKernel(chunks, std::make_index_sequence<kTensorMaxChunks>());
}

}  // namespace gmmscore

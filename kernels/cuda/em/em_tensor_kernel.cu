#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/common/cuda_status.h"
#include "kernels/cuda/common/log2_math.cuh"
#include "kernels/cuda/common/log_sum.cuh"
#include "kernels/cuda/em/em_tensor_kernel.h"
#include "kernels/cuda/score/mma_f16.cuh"
#include "kernels/cuda/score/mma_tf32.cuh"

namespace gmmscore {
namespace {

constexpr int kThreads = 32 * kEmTensorWarps;
constexpr int kTileFrames = 8;  // the log-likelihoods' N, the statistics' K
constexpr int kStageTiles = 4;
constexpr int kStageFrames = kTileFrames * kStageTiles;  // frames converted at a time
constexpr int kFlushTiles = kEmTensorFlushFrames / kTileFrames;
static_assert(kFlushTiles % 2 == 0, "the statistics take tiles two at a time");
constexpr float kLowDown = 1.0f / kTensorF16LowScale;

// The statistics kernel's shared memory: the B fragments of a stage's frames,
//   ll     [tile][pair][lane] words {b0 hi, b1 hi, b0 lo, b1 lo}: b0 the half2 {x', x'^2} of
//          frame 8n + s, dimension 4 (2p) + t, scaled by the block's columns and the frame, b1
//          of dimension 4 (2p + 1) + t;
//   stat   [tile][chunk][lane] words {b0 hi, b1 hi, b0 lo, b1 lo}: b0 = y(frame 8n + 2t, column
//          8c + s), b1 = y(frame 8n + 2t + 1, column 8c + s), with columns 8c .. 8c + 3 the x' of
//          dimensions 4c .. 4c + 3 and 8c + 4 .. 8c + 7 their squares (TF32 splits);
// both double-buffered with the stage's {lse, 2^e} a frame (a warp builds the next stage's words
// before it computes this one's: its ALU work overlaps other warps' products); the frames and lse
// as copied (asynchronously, a stage ahead of the words); the block's shift and column scales;
// and the double sums of each warp's Gaussians.
template <int kChunks>
struct SharedLayout {
  static constexpr int kPairs = EmTensorPairs(kChunks);
  static constexpr int kDimPad = 8 * kPairs;
  static constexpr int kLlWords = kStageTiles * kPairs * 32;
  static constexpr int kStatWords = kStageTiles * kChunks * 32;
  static constexpr int kColumns = 8 * kChunks;  // a warp's statistics columns, chunk-ordered
  static constexpr size_t kLl = 0;              // [2][kLlWords]
  static constexpr size_t kStat = kLl + 2 * sizeof(uint4) * kLlWords;        // [2][kStatWords]
  static constexpr size_t kFrames = kStat + 2 * sizeof(uint4) * kStatWords;  // [2][frames]
  static constexpr size_t kX = kFrames + 2 * sizeof(float2) * kStageFrames;  // [2][frames * dim]
  static constexpr size_t kLse = kX + 2 * sizeof(float) * kStageFrames * kDimPad;  // [2][frames]
  static constexpr size_t kShift = kLse + 2 * sizeof(float) * kStageFrames;        // [kDimPad]
  static constexpr size_t kScale = kShift + sizeof(float) * kDimPad;               // [2][kDimPad]
  static constexpr size_t kSums = (kScale + 2 * sizeof(float) * kDimPad + 15) / 16 * 16;
  static constexpr size_t kOcc = kSums + sizeof(double) * kEmTensorWarps * 16 * kColumns;
  static constexpr size_t kBytes = kOcc + sizeof(double) * kEmTensorWarps * 16;
};

__device__ __forceinline__ uint4 SplitPair(float b0, float b1) {
  uint32_t h0, l0, h1, l1;
  SplitTf32(b0, h0, l0);
  SplitTf32(b1, h1, l1);
  return make_uint4(h0, h1, l0, l1);
}

// The scaled {x', x'^2} of one frame's dimensions 4c + t for every chunk c of the pairs (zero
// past the frame's dimensions or where `present` is false), and the frame's exponent: the
// largest over the 4 lanes t that hold the frame (lanes 4s .. 4s + 3 of one warp, all calling).
template <int kPairs>
struct FrameOperands {
  float2 y[2 * kPairs];
  int32_t e = 0;

  __device__ __forceinline__ void Load(const float* x, bool present, int dim, int t,
                                       const float* shift, const float* scale) {
    constexpr int kDimPad = 8 * kPairs;
    float largest = 0.0f;
#pragma unroll
    for (int c = 0; c < 2 * kPairs; ++c) {
      const int d = 4 * c + t;
      const float v = present && d < dim ? x[d] - shift[d] : 0.0f;
      y[c] = make_float2(v * scale[d], v * v * scale[kDimPad + d]);
      largest = fmaxf(largest, fmaxf(fabsf(y[c].x), fabsf(y[c].y)));
    }
    largest = fmaxf(largest, __shfl_xor_sync(0xffffffffu, largest, 1));
    largest = fmaxf(largest, __shfl_xor_sync(0xffffffffu, largest, 2));
    e = FrameExponent(largest);
  }

  // Chunk c at the frame's scale, split: {hi, lo} half2 words.
  __device__ __forceinline__ void Split(int c, uint32_t& hi, uint32_t& lo) const {
    const float down = PowerOfTwo(-e);
    SplitF16(y[c].x * down, y[c].y * down, hi, lo);
  }
};

// products (16 x 8, frames or Gaussians by the other) = the tile's three split products over
// every pair of chunks: a_hi / a_lo the A fragments of each pair, b_words the tile's B words
// ({b0 hi, b1 hi, b0 lo, b1 lo} at b_words[p * 32]). hi.hi accumulates in the tensor cores across
// the pairs, and so do the corrections (apart, 2^11 smaller, added once at the end). The tensor
// cores truncate as they accumulate (tensor_kernel.h), but here over at most 5 steps of k = 16
// (40 dimensions), not the scoring kernels' 27 steps of k = 8: on real MFCC frames the average
// log-likelihood a frame moved from 6.1e-7 to 6.6e-7 nats from float64, the parameters not
// measurably (docs/PERFORMANCE.md, "EM statistics"), where starting hi.hi from zero every pair cost
// 16 float32 additions a tile, 4% of the E-step.
template <int kPairs>
__device__ __forceinline__ void SplitProducts(const uint32_t (&a_hi)[kPairs][4],
                                              const uint32_t (&a_lo)[kPairs][4],
                                              const uint4* b_words, float (&products)[4]) {
  float corr[4];
#pragma unroll
  for (int p = 0; p < kPairs; ++p) {
    const uint4 b = b_words[p * 32];
    if (p == 0) {
      MmaF16From0(products, a_hi[p], b.x, b.y);
      MmaF16From0(corr, a_hi[p], b.z, b.w);
    } else {
      MmaF16(products, a_hi[p], b.x, b.y);
      MmaF16(corr, a_hi[p], b.z, b.w);
    }
    MmaF16(corr, a_lo[p], b.x, b.y);
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) products[i] = fmaf(corr[i], kLowDown, products[i]);
}

__device__ __forceinline__ uint32_t SharedAddress(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void CopyFloatAsync(float* shared, const float* global) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(SharedAddress(shared)), "l"(global)
               : "memory");
}

// Copies `words` 16-byte words global -> shared asynchronously.
__device__ __forceinline__ void CopyWordsAsync(uint4* shared, const uint4* global, int words) {
  for (int i = threadIdx.x; i < words; i += blockDim.x) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(SharedAddress(shared + i)),
                 "l"(global + i)
                 : "memory");
  }
}

__device__ __forceinline__ void CommitCopies() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}

template <int kPending>
__device__ __forceinline__ void WaitCopies() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}

// Starts copying frames [first, first + count) and their lse into a stage's buffers.
__device__ __forceinline__ void PrefetchStage(const float* __restrict__ feats,
                                              const float* __restrict__ lse, int64_t first,
                                              int count, int dim, float* xs, float* lse_s) {
  const float* from = feats + first * dim;
  for (int i = threadIdx.x; i < count * dim; i += kThreads) CopyFloatAsync(xs + i, from + i);
  for (int i = threadIdx.x; i < count; i += kThreads) CopyFloatAsync(lse_s + i, lse + first + i);
  CommitCopies();
}

// The B fragments of the `count` frames in xs (row stride dim), less the block's shift; zero past
// the frames and the dimensions. The first kLlThreads threads build the log-likelihoods' words,
// four lanes a frame, and each frame's {lse (log2 units), 2^e} (+inf past the frames: no
// posterior); the statistics' words go in pairs (a dimension's x' and x'^2 words from the same two
// values), one pair to each of those threads and the rest to the others, so that all finish about
// together.
template <int kChunks>
__device__ void BuildWords(const float* xs, const float* lse, int count, int dim,
                           const float* shift, const float* scale, uint4* ll, uint4* stat,
                           float2* frames) {
  constexpr int kPairs = EmTensorPairs(kChunks);
  constexpr int kLlThreads = 4 * kStageFrames;
  constexpr int kStatPairs = kStageTiles * kChunks * 16;
  static_assert(kLlThreads < kThreads && kLlThreads % 32 == 0, "four lanes a frame, whole warps");
  if (threadIdx.x < kLlThreads) {
    const int f = threadIdx.x / 4, t = threadIdx.x % 4;
    FrameOperands<kPairs> frame;
    frame.Load(xs + f * dim, f < count, dim, t, shift, scale);
    const int n = f / 8, s = f % 8;
#pragma unroll
    for (int p = 0; p < kPairs; ++p) {
      uint32_t h0, l0, h1, l1;
      frame.Split(2 * p, h0, l0);
      frame.Split(2 * p + 1, h1, l1);
      ll[(n * kPairs + p) * 32 + 4 * s + t] = make_uint4(h0, h1, l0, l1);
    }
    if (t == 0) frames[f] = make_float2(f < count ? lse[f] : INFINITY, PowerOfTwo(frame.e));
  }
  const auto value = [&](int f, int d) {
    return f < count && d < dim ? xs[f * dim + d] - shift[d] : 0.0f;
  };
  // Pair i: lane 4s + t (s < 4) of tile n, chunk c, and lane 4 (s + 4) + t, its squares.
  const int step = threadIdx.x < kLlThreads ? kStatPairs : kThreads - kLlThreads;
  for (int i = threadIdx.x; i < kStatPairs; i += step) {
    const int q = i % 16, c = (i / 16) % kChunks, n = i / (16 * kChunks);
    const int s = q / 4, t = q % 4, d = 4 * c + s;
    const float y0 = value(8 * n + 2 * t, d), y1 = value(8 * n + 2 * t + 1, d);
    uint4* words = stat + (n * kChunks + c) * 32;
    words[q] = SplitPair(y0, y1);
    words[q + 16] = SplitPair(y0 * y0, y1 * y1);
  }
}

// The warp's 16 Gaussians: A fragments of every pair and the constants of Gaussians s, s + 8.
template <int kChunks>
struct WarpGaussians {
  static constexpr int kPairs = EmTensorPairs(kChunks);
  uint32_t hi[kPairs][4];
  uint32_t lo[kPairs][4];
  float2 k[2];

  __device__ void Load(const EmTensorModelView& model, int warp_tile) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int p = 0; p < kPairs; ++p) {
      const uint4 h = model.params[(size_t(warp_tile * kPairs + p) * 2 + 0) * 32 + lane];
      const uint4 l = model.params[(size_t(warp_tile * kPairs + p) * 2 + 1) * 32 + lane];
      hi[p][0] = h.x, hi[p][1] = h.y, hi[p][2] = h.z, hi[p][3] = h.w;
      lo[p][0] = l.x, lo[p][1] = l.y, lo[p][2] = l.z, lo[p][3] = l.w;
    }
    k[0] = model.consts[warp_tile * kEmTensorWarpGauss + lane / 4];
    k[1] = model.consts[warp_tile * kEmTensorWarpGauss + lane / 4 + 8];
  }

  // ll[j] = {(s, 2t), (s, 2t + 1), (s + 8, 2t), (s + 8, 2t + 1)} (Gaussian, frame) of tile n + j;
  // frames[f].y is frame f's 2^e.
  __device__ void LogLikes(const uint4* __restrict__ ll_words, const float2* frames, int n,
                           float (&ll)[2][4]) const {
    const int lane = threadIdx.x % 32, t = lane % 4;
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      SplitProducts<kPairs>(hi, lo, ll_words + ((n + j) * kPairs) * 32 + lane, ll[j]);
      const float up0 = frames[8 * (n + j) + 2 * t].y, up1 = frames[8 * (n + j) + 2 * t + 1].y;
      ll[j][0] = fmaf(ll[j][0], up0, k[0].x) + k[0].y;
      ll[j][1] = fmaf(ll[j][1], up1, k[0].x) + k[0].y;
      ll[j][2] = fmaf(ll[j][2], up0, k[1].x) + k[1].y;
      ll[j][3] = fmaf(ll[j][3], up1, k[1].x) + k[1].y;
    }
  }
};

// The frames of block row blockIdx.y: [begin, end).
__device__ __forceinline__ void SliceOfFrames(int32_t num_frames, int64_t& begin, int64_t& end) {
  const int64_t per = (int64_t(num_frames) + gridDim.y - 1) / gridDim.y;
  const int64_t per_stage = (per + kStageFrames - 1) / kStageFrames * kStageFrames;
  begin = int64_t(blockIdx.y) * per_stage;
  end = begin + per_stage < num_frames ? begin + per_stage : int64_t(num_frames);
}

// The log-sums: a warp owns 16 frames (the A operand: scaled, split {x', x'^2} in registers,
// remade for each block's shift and scales) and meets the Gaussians of its slice a record of
// kEmTensorRecordGauss at a time, staged through shared memory (EmTensorLogSumRecordWords,
// double-buffered by cp.async) and read by all of the block's warps. Lane 4s + t keeps running
// (max, sum) of frames s and s + 8 over Gaussians 2t, 2t + 1 of every 8; the lanes of a frame
// merge at the end.
constexpr int kLogSumWarps = 8;
constexpr int kLogSumThreads = 32 * kLogSumWarps;
constexpr int kLogSumFrames = 16 * kLogSumWarps;

// Running log-sum of one frame in log2 units, merged two values at a time.
struct RunningLogSum {
  float max = kEmTensorPadConst;
  float sum = 0.0f;
  __device__ __forceinline__ void Add(float a, float b) {
    const float m = fmaxf(a, b);
    if (m > max) {  // rare after the first few Gaussians
      sum *= Exp2Approx(max - m);
      max = m;
    }
    sum += Exp2Approx(a - max) + Exp2Approx(b - max);
  }
  __device__ __forceinline__ void Merge(float m2, float s2) {
    const float m = fmaxf(max, m2);
    sum = sum * Exp2Approx(max - m) + s2 * Exp2Approx(m2 - m);
    max = m;
  }
};

template <int kChunks>
__global__ void __launch_bounds__(kLogSumThreads, 2)
    LogSumsKernel(const EmTensorModelView model, const float* __restrict__ feats,
                  const int32_t num_frames, float2* __restrict__ partial) {
  constexpr int kPairs = EmTensorPairs(kChunks);
  constexpr int kRecord = EmTensorLogSumRecordWords(kChunks);
  constexpr int kParamWords = (kEmTensorRecordGauss / 8) * kPairs * 32;
  extern __shared__ __align__(16) uint4 stages[];  // [2][kRecord]
  const int lane = threadIdx.x % 32, s = lane / 4, t = lane % 4;
  const int64_t frame0 = int64_t(blockIdx.x) * kLogSumFrames + (threadIdx.x / 32) * 16;
  // This block row's slice of the records.
  const int records = model.num_gauss / kEmTensorRecordGauss;
  const int per = (records + gridDim.y - 1) / gridDim.y;
  const int first_record = blockIdx.y * per;
  const int last_record = min(records, first_record + per);
  RunningLogSum sums[2];
  // A fragments, [p][2 (c - 2p) + h]: frame s + 8h, chunk c, made at the first record of each
  // block of Gaussians (its shift and scales; read again from the frames: they stay in L1,
  // registers are short).
  uint32_t a_hi[kPairs][4], a_lo[kPairs][4];
  float up[2];
  constexpr int kRecordsABlock = kEmTensorBlockGauss / kEmTensorRecordGauss;
  if (first_record < last_record) {
    CopyWordsAsync(stages, model.log_sum_records + size_t(first_record) * kRecord, kRecord);
    CommitCopies();
  }
  for (int b = first_record; b < last_record; ++b) {
    const uint4* stage = stages + ((b - first_record) % 2) * kRecord;
    if (b + 1 < last_record) {
      CopyWordsAsync(stages + ((b + 1 - first_record) % 2) * kRecord,
                     model.log_sum_records + size_t(b + 1) * kRecord, kRecord);
      CommitCopies();
      WaitCopies<1>();
    } else {
      WaitCopies<0>();
    }
    __syncthreads();
    const float2* consts = reinterpret_cast<const float2*>(stage + kParamWords);
    const float* shift =
        reinterpret_cast<const float*>(stage + kParamWords + kEmTensorRecordGauss / 2);
    const float* scale = shift + 8 * kPairs;
    if (b == first_record || b % kRecordsABlock == 0) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int64_t f = frame0 + s + 8 * h;
        FrameOperands<kPairs> frame;
        frame.Load(feats + f * model.dim, f < num_frames, model.dim, t, shift, scale);
#pragma unroll
        for (int c = 0; c < 2 * kPairs; ++c) {
          frame.Split(c, a_hi[c / 2][2 * (c % 2) + h], a_lo[c / 2][2 * (c % 2) + h]);
        }
        up[h] = PowerOfTwo(frame.e);
      }
    }
#pragma unroll 1
    for (int n = 0; n < kEmTensorRecordGauss / 8; ++n) {
      // Tile n: Gaussians 8n + 2t, 8n + 2t + 1 of frames s and s + 8. C' = hi + lo, read from
      // the stage where needed (registers are short).
      float products[4];
      SplitProducts<kPairs>(a_hi, a_lo, stage + (n * kPairs) * 32 + lane, products);
      const float2 k0 = consts[8 * n + 2 * t], k1 = consts[8 * n + 2 * t + 1];
      sums[0].Add(fmaf(products[0], up[0], k0.x) + k0.y, fmaf(products[1], up[0], k1.x) + k1.y);
      sums[1].Add(fmaf(products[2], up[1], k0.x) + k0.y, fmaf(products[3], up[1], k1.x) + k1.y);
    }
    __syncthreads();  // the stage is read before the copy after next overwrites it
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
#pragma unroll
    for (int offset = 1; offset < 4; offset *= 2) {
      const float m = __shfl_xor_sync(0xffffffffu, sums[h].max, offset);
      const float v = __shfl_xor_sync(0xffffffffu, sums[h].sum, offset);
      sums[h].Merge(m, v);
    }
    const int64_t f = frame0 + s + 8 * h;
    if (t == 0 && f < num_frames) {
      partial[size_t(blockIdx.y) * num_frames + f] = make_float2(sums[h].max, sums[h].sum);
    }
  }
}

template <int kChunks>
__global__ void __launch_bounds__(kThreads, 1)
    StatisticsKernel(const EmTensorModelView model, const float* __restrict__ feats,
                     const float* __restrict__ lse_bits, const int32_t num_frames,
                     double* __restrict__ sums) {
  using L = SharedLayout<kChunks>;
  extern __shared__ __align__(16) unsigned char smem[];
  uint4* ll_words = reinterpret_cast<uint4*>(smem + L::kLl);
  uint4* stat_words = reinterpret_cast<uint4*>(smem + L::kStat);
  float2* words_frames = reinterpret_cast<float2*>(smem + L::kFrames);
  float* xs = reinterpret_cast<float*>(smem + L::kX);
  float* lse_s = reinterpret_cast<float*>(smem + L::kLse);
  float* shift = reinterpret_cast<float*>(smem + L::kShift);
  float* scale = reinterpret_cast<float*>(smem + L::kScale);
  double* warp_sums = reinterpret_cast<double*>(smem + L::kSums);  // [warp][16][kColumns]
  double* warp_occ = reinterpret_cast<double*>(smem + L::kOcc);    // [warp][16]
  const int dim = model.dim;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, s = lane / 4, t = lane % 4;
  for (int i = threadIdx.x; i < kEmTensorWarps * 16 * L::kColumns; i += kThreads) {
    warp_sums[i] = 0.0;
  }
  for (int i = threadIdx.x; i < kEmTensorWarps * 16; i += kThreads) warp_occ[i] = 0.0;
  for (int d = threadIdx.x; d < L::kDimPad; d += kThreads) {
    shift[d] = d < dim ? model.shift[blockIdx.x * dim + d] : 0.0f;
    scale[d] = d < dim ? model.column_scale[(2 * blockIdx.x) * dim + d] : 0.0f;
    scale[L::kDimPad + d] = d < dim ? model.column_scale[(2 * blockIdx.x + 1) * dim + d] : 0.0f;
  }
  WarpGaussians<kChunks> gauss;
  gauss.Load(model, blockIdx.x * kEmTensorWarps + warp);
  float sum[kChunks][4] = {};
  float occ[2] = {0.0f, 0.0f};  // Gaussians s, s + 8 over the lane's frames
  int tiles = 0;
  // float32 sums to the warp's doubles (each lane its own entries: no conflicts).
  const auto flush = [&] {
    double* mine = warp_sums + warp * 16 * L::kColumns;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      mine[s * L::kColumns + 8 * c + 2 * t] += sum[c][0];
      mine[s * L::kColumns + 8 * c + 2 * t + 1] += sum[c][1];
      mine[(s + 8) * L::kColumns + 8 * c + 2 * t] += sum[c][2];
      mine[(s + 8) * L::kColumns + 8 * c + 2 * t + 1] += sum[c][3];
#pragma unroll
      for (int i = 0; i < 4; ++i) sum[c][i] = 0.0f;
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      occ[h] += __shfl_xor_sync(0xffffffffu, occ[h], 1);
      occ[h] += __shfl_xor_sync(0xffffffffu, occ[h], 2);
    }
    if (t == 0) {
      warp_occ[warp * 16 + s] += occ[0];
      warp_occ[warp * 16 + s + 8] += occ[1];
    }
    occ[0] = occ[1] = 0.0f;
    tiles = 0;
  };
  int64_t begin, end;
  SliceOfFrames(num_frames, begin, end);
  const auto count_at = [&](int64_t first) {
    return end - first < kStageFrames ? int(end - first) : kStageFrames;
  };
  // Frames of stage i + 2 copying, words of stage i + 1 building, products of stage i: one stage
  // apart each, with a barrier a stage.
  const auto xs_of = [&](int b) { return xs + b * kStageFrames * L::kDimPad; };
  const auto words_of = [&](int b, int64_t first) {
    BuildWords<kChunks>(xs_of(b), lse_s + b * kStageFrames, count_at(first), dim, shift, scale,
                        ll_words + b * L::kLlWords, stat_words + b * L::kStatWords,
                        words_frames + b * kStageFrames);
  };
  if (begin < end) PrefetchStage(feats, lse_bits, begin, count_at(begin), dim, xs_of(0), lse_s);
  WaitCopies<0>();
  __syncthreads();
  if (begin < end) words_of(0, begin);
  if (begin + kStageFrames < end) {
    PrefetchStage(feats, lse_bits, begin + kStageFrames, count_at(begin + kStageFrames), dim,
                  xs_of(1), lse_s + kStageFrames);
  }
  int buffer = 0;
  for (int64_t first = begin; first < end; first += kStageFrames, buffer ^= 1) {
    WaitCopies<0>();
    __syncthreads();  // this stage's words are built, the next's frames in, the last's consumed
    const int64_t next = first + kStageFrames;
    if (next < end) words_of(buffer ^ 1, next);
    if (next + kStageFrames < end) {
      PrefetchStage(feats, lse_bits, next + kStageFrames, count_at(next + kStageFrames), dim,
                    xs_of(buffer), lse_s + buffer * kStageFrames);
    }
    const uint4* ll_stage = ll_words + buffer * L::kLlWords;
    const uint4* stat_stage = stat_words + buffer * L::kStatWords;
    const float2* stage_frames = words_frames + buffer * kStageFrames;
#pragma unroll 1
    for (int n = 0; n < kStageTiles; n += 2) {
      float ll[2][4];
      gauss.LogLikes(ll_stage, stage_frames, n, ll);
      // The A fragments of the statistics, with reduction index t <-> frame 2t, t + 4 <-> 2t + 1:
      // {(s, t), (s + 8, t), (s, t + 4), (s + 8, t + 4)}.
      uint32_t a_hi[2][4], a_lo[2][4];
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const float lse0 = stage_frames[8 * (n + j) + 2 * t].x;
        const float lse1 = stage_frames[8 * (n + j) + 2 * t + 1].x;
        const float g[4] = {Exp2Approx(ll[j][0] - lse0), Exp2Approx(ll[j][1] - lse1),
                            Exp2Approx(ll[j][2] - lse0), Exp2Approx(ll[j][3] - lse1)};
        occ[0] += g[0] + g[1];
        occ[1] += g[2] + g[3];
        SplitTf32(g[0], a_hi[j][0], a_lo[j][0]);
        SplitTf32(g[2], a_hi[j][1], a_lo[j][1]);
        SplitTf32(g[1], a_hi[j][2], a_lo[j][2]);
        SplitTf32(g[3], a_hi[j][3], a_lo[j][3]);
      }
      // sum[c] += gamma . y of both tiles: the chains of two chunks at a time, interleaved.
#pragma unroll
      for (int c0 = 0; c0 < kChunks; c0 += 2) {
        float acc[2][4];
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          uint4 b[2];
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            if (c0 + e < kChunks) b[e] = stat_stage[((n + j) * kChunks + c0 + e) * 32 + lane];
          }
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            if (c0 + e >= kChunks) continue;
            if (j == 0) {
              MmaTf32From0(acc[e], a_lo[j], b[e].x, b[e].y);
            } else {
              MmaTf32(acc[e], a_lo[j], b[e].x, b[e].y);
            }
          }
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            if (c0 + e < kChunks) MmaTf32(acc[e], a_hi[j], b[e].z, b[e].w);
          }
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            if (c0 + e < kChunks) MmaTf32(acc[e], a_hi[j], b[e].x, b[e].y);
          }
        }
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          if (c0 + e < kChunks) {
#pragma unroll
            for (int i = 0; i < 4; ++i) sum[c0 + e][i] += acc[e][i];
          }
        }
      }
      tiles += 2;
      if (tiles == kFlushTiles) flush();
    }
  }
  flush();
  __syncthreads();
  const int32_t columns = EmTensorColumns(dim);
  const int64_t block_first = int64_t(blockIdx.x) * kEmTensorBlockGauss;
  for (int i = threadIdx.x; i < kEmTensorWarps * 16 * L::kColumns; i += kThreads) {
    const int g = i / L::kColumns, col = i - g * L::kColumns;
    const int c = col / 8, k = col % 8, d = 4 * c + (k & 3);
    if (d >= dim) continue;
    const int out = 1 + d + (k >= 4 ? dim : 0);
    atomicAdd(&sums[(block_first + g) * columns + out], warp_sums[i]);
  }
  for (int g = threadIdx.x; g < kEmTensorWarps * 16; g += kThreads) {
    atomicAdd(&sums[(block_first + g) * columns], warp_occ[g]);
  }
}

// The frame's log-sum is written twice: lse (natural log) for the exact kernels and the total,
// lse_bits (log2 units) for the tensor statistics. Each is anchored on the larger share's own
// maximum, so that a frame far from every Gaussian (log-likelihoods of -1e7 and below, where a
// float's spacing is a nat or more) gets exactly the value its likeliest Gaussian's kernel
// computed: a second rounding of it through the other unit would move that Gaussian's posterior
// by factors of 2.
__global__ void CombineKernel(const float2* __restrict__ partial, int32_t num_partials,
                              const float* __restrict__ extra_lse, int32_t num_frames,
                              float* __restrict__ lse, float* __restrict__ lse_bits,
                              double* total_log_like) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  double v = 0.0;
  if (t < num_frames) {
    LogSum2 tensor;
    for (int32_t b = 0; b < num_partials; ++b) {
      const float2 p = partial[size_t(b) * num_frames + t];
      tensor.Add(p.x, p.y);
    }
    const double extra = extra_lse != nullptr ? double(extra_lse[t]) : -double(INFINITY);
    const double extra_bits = extra * kLog2eDouble;
    if (tensor.max != -INFINITY && double(tensor.max) >= extra_bits) {
      const double bits =
          double(tensor.max) + log2(double(tensor.sum) + exp2(extra_bits - double(tensor.max)));
      lse_bits[t] = float(bits);
      lse[t] = float(bits * kLn2Double);
    } else if (extra != -double(INFINITY)) {
      const double nats = extra + log1p(double(tensor.sum) * exp2(double(tensor.max) - extra_bits));
      lse[t] = float(nats);
      lse_bits[t] = float(nats * kLog2eDouble);
    } else {
      lse[t] = lse_bits[t] = -INFINITY;
    }
    v = lse[t];
  }
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) atomicAdd(total_log_like, v);
}

using LogSumsFunction = void (*)(EmTensorModelView, const float*, int32_t, float2*);
using StatisticsFunction = void (*)(EmTensorModelView, const float*, const float*, int32_t,
                                    double*);

template <size_t... kIndex>
LogSumsFunction LogSumsKernelFor(int chunks, std::index_sequence<kIndex...>) {
  static const LogSumsFunction kernels[] = {&LogSumsKernel<int(kIndex) + 1>...};
  return kernels[chunks - 1];
}

// The statistics kernel for `pairs` pairs of chunks: instantiated for even chunk counts only (an
// odd count takes the next, its last chunk zero), which keeps every instance within the
// registers of kThreads threads without spills.
template <size_t... kIndex>
StatisticsFunction StatisticsKernelFor(int pairs, std::index_sequence<kIndex...>) {
  static const StatisticsFunction kernels[] = {&StatisticsKernel<2 * (int(kIndex) + 1)>...};
  return kernels[pairs - 1];
}

absl::Status CheckView(const EmTensorModelView& model) {
  const int chunks = (model.dim + 3) / 4;
  if (model.dim < 1 || chunks > kEmTensorMaxChunks || model.num_gauss % kEmTensorBlockGauss != 0) {
    return absl::InvalidArgumentError(absl::StrCat("no tensor-core EM launch for dimension ",
                                                   model.dim, " and ", model.num_gauss,
                                                   " Gaussians"));
  }
  return absl::OkStatus();
}

template <int kChunks>
size_t LogSumsBytes() {
  return 2 * sizeof(uint4) * EmTensorLogSumRecordWords(kChunks);
}
template <int kChunks>
size_t StatisticsBytes() {
  return SharedLayout<kChunks>::kBytes;
}

template <size_t... kIndex>
size_t LogSumsBytesFor(int chunks, std::index_sequence<kIndex...>) {
  static const size_t bytes[] = {LogSumsBytes<int(kIndex) + 1>()...};
  return bytes[chunks - 1];
}

template <size_t... kIndex>
size_t StatisticsBytesFor(int pairs, std::index_sequence<kIndex...>) {
  static const size_t bytes[] = {StatisticsBytes<2 * (int(kIndex) + 1)>()...};
  return bytes[pairs - 1];
}

absl::Status LaunchKernel(const void* kernel, size_t bytes, dim3 grid, int threads, void** args,
                          cudaStream_t stream) {
  GMM_CUDA_RETURN_IF_ERROR(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  GMM_CUDA_RETURN_IF_ERROR(cudaLaunchKernel(kernel, grid, dim3(threads), args, bytes, stream));
  return absl::OkStatus();
}

}  // namespace

int32_t EmTensorLogSumSlices(const EmTensorModelView& model, int32_t num_frames, int32_t sms) {
  const int32_t frame_blocks = std::max(1, (num_frames + kLogSumFrames - 1) / kLogSumFrames);
  return std::clamp((2 * sms + frame_blocks - 1) / frame_blocks, 1,
                    std::max(1, model.num_gauss / kEmTensorRecordGauss));
}

absl::Status EmTensorLogSums(const EmTensorModelView& model, const float* feats, int32_t num_frames,
                             int32_t slices, float2* partial, cudaStream_t stream) {
  GMM_RETURN_IF_ERROR(CheckView(model));
  if (num_frames <= 0 || model.num_gauss == 0) return absl::OkStatus();
  const int chunks = (model.dim + 3) / 4;
  const auto indices = std::make_index_sequence<kEmTensorMaxChunks>();
  const void* kernel = reinterpret_cast<const void*>(LogSumsKernelFor(chunks, indices));
  void* args[] = {const_cast<EmTensorModelView*>(&model), &feats, &num_frames, &partial};
  const dim3 grid(unsigned((num_frames + kLogSumFrames - 1) / kLogSumFrames),
                  unsigned(std::clamp(slices, 1, model.num_gauss / kEmTensorRecordGauss)));
  return LaunchKernel(kernel, LogSumsBytesFor(chunks, indices), grid, kLogSumThreads, args, stream);
}

absl::Status EmTensorStatistics(const EmTensorModelView& model, const float* feats,
                                const float* lse_bits, int32_t num_frames, int32_t splits,
                                double* sums, cudaStream_t stream) {
  GMM_RETURN_IF_ERROR(CheckView(model));
  if (num_frames <= 0 || model.num_gauss == 0) return absl::OkStatus();
  const int pairs = EmTensorPairs((model.dim + 3) / 4);
  const auto indices = std::make_index_sequence<EmTensorPairs(kEmTensorMaxChunks)>();
  const void* kernel = reinterpret_cast<const void*>(StatisticsKernelFor(pairs, indices));
  void* args[] = {const_cast<EmTensorModelView*>(&model), &feats, &lse_bits, &num_frames, &sums};
  const int32_t max_splits = (num_frames + kStageFrames - 1) / kStageFrames;
  const dim3 grid(unsigned(model.num_gauss / kEmTensorBlockGauss),
                  unsigned(std::clamp(splits, 1, std::min(max_splits, 65535))));
  return LaunchKernel(kernel, StatisticsBytesFor(pairs, indices), grid, kThreads, args, stream);
}

absl::Status EmCombineLogSums(const float2* partial, int32_t num_partials, const float* extra_lse,
                              int32_t num_frames, float* lse, float* lse_bits,
                              double* total_log_like, cudaStream_t stream) {
  if (num_frames <= 0) return absl::OkStatus();
  constexpr int kCombineThreads = 256;
  CombineKernel<<<unsigned((num_frames + kCombineThreads - 1) / kCombineThreads), kCombineThreads,
                  0, stream>>>(partial, num_partials, extra_lse, num_frames, lse, lse_bits,
                               total_log_like);
  GMM_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

}  // namespace gmmscore

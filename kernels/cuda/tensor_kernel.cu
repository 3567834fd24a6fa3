#include <utility>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/log2_math.cuh"
#include "kernels/cuda/simt_model_view.h"  // kPadGconst
#include "kernels/cuda/tensor_kernel.h"

namespace gmmscore {
namespace {

constexpr int32_t kFrameTile = 16;  // frames of a warp: the m16n8k8 product's M
constexpr int32_t kStages = 4;      // rows in flight through shared memory
constexpr int32_t kMaxThreads = kTensorMaxFrameTiles * 32;
// A register cap of 65536 / (kMaxThreads * kMinBlocks) = 128 a thread: the frames' operands (8 a
// chunk), the running log-sums and totals and the operands and accumulators of a few chunks in
// flight fit without spills, and 16 warps share a multiprocessor.
constexpr int32_t kMinBlocks = 2;
constexpr int32_t kCombineThreads = 256;

// hi = x rounded to TF32 (nearest, ties away: cvt.rna.tf32.f32 without its NaN handling, which
// finite scores never need), lo = x - hi, exact in float32; the tensor cores read lo's top 19 bits.
__device__ __forceinline__ void SplitTf32(float x, uint32_t& hi, uint32_t& lo) {
  hi = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
  lo = __float_as_uint(x - __uint_as_float(hi));
}

// d += a . b for one m16n8k8 tile (PTX ISA fragment layouts: lane = 4 s + t holds a = A[s][t],
// A[s + 8][t], A[s][t + 4], A[s + 8][t + 4]; b = B[t][s], B[t + 4][s]; d = D[s][2t], D[s][2t + 1],
// D[s + 8][2t], D[s + 8][2t + 1]).
__device__ __forceinline__ void MmaTf32(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                        uint32_t b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t SharedAddress(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// The row pipeline's stages fill by bulk copies (the copy engine, one thread issuing) that
// complete on an mbarrier per stage, which the block's threads wait on (PTX ISA: mbarrier,
// cp.async.bulk).
__device__ __forceinline__ void InitStageBarrier(uint64_t* barrier) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(SharedAddress(barrier)) : "memory");
}

__device__ __forceinline__ void ExpectBytes(uint64_t* barrier, uint32_t bytes) {
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(SharedAddress(barrier)),
      "r"(bytes)
      : "memory");
}

__device__ __forceinline__ void BulkCopy(void* shared, const void* global, uint32_t bytes,
                                         uint64_t* barrier) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(SharedAddress(shared)),
      "l"(global), "r"(bytes), "r"(SharedAddress(barrier))
      : "memory");
}

__device__ __forceinline__ void WaitStage(uint64_t* barrier, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n"
      "}" ::"r"(SharedAddress(barrier)),
      "r"(parity)
      : "memory");
}

// One block: frame tile blockIdx.x (16 frames a warp), group blockIdx.y, slice blockIdx.z of the
// group's rows. Lane 4 s + t holds frames s and s + 8 of its warp's tile against states 2t, 2t + 1
// of each 8-state half of the group (the accumulator fragment), as running log-sums in log2 units.
template <int kChunks, bool kExact>
__global__ void __launch_bounds__(kMaxThreads, kMinBlocks)
    TensorScoreKernel(const TensorModelView model, const float* __restrict__ feats,
                      const int32_t num_frames, float* __restrict__ out,
                      float* __restrict__ partial) {
  // A row (tensor_model_layout.h) is [2][kChunks][kTensorLanes] parameter words (high parts, then
  // low parts), then the row's 16 constants. A stage holds what the kernel reads of it: all of it,
  // or for one product the high parts and the constants.
  constexpr int32_t kParamWords = kChunks * kTensorLanes;
  constexpr int32_t kRowWords = TensorRowWords(kChunks);
  constexpr int32_t kStageWords = kExact ? kRowWords : kParamWords + kTensorGroupStates / 4;
  constexpr uint32_t kStageBytes = kStageWords * sizeof(float4);
  extern __shared__ float4 stages[];
  uint64_t* const stage_barriers = reinterpret_cast<uint64_t*>(stages + kStages * kStageWords);
  // The fragments' coordinates (lane = 4 s + t), recomputed where needed rather than kept live
  // through the row loop, whose registers are at their cap.
  const auto s = [] { return int32_t(threadIdx.x % 32) / 4; };
  const auto t = [] { return int32_t(threadIdx.x % 4); };
  const auto first_frame = [] {
    return (int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32) * kFrameTile;
  };

  // The warp's frames as the A operand of every chunk, split once: a[c] = x' of frames s, s + 8
  // and their squares, dimension 4c + t. Padding frames and dimensions are zero (u = v = 0 there).
  uint32_t a_hi[kChunks][4];
  uint32_t a_lo[kChunks][4];
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int32_t d = 4 * c + t();
    float x[2] = {0.0f, 0.0f};
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t frame = first_frame() + s() + 8 * h;
      if (d < model.dim && frame < num_frames) x[h] = feats[frame * model.dim + d] - model.shift[d];
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      SplitTf32(x[h], a_hi[c][h], a_lo[c][h]);
      SplitTf32(x[h] * x[h], a_hi[c][2 + h], a_lo[c][2 + h]);
    }
  }

  const int32_t first_row = model.group_first_row[blockIdx.y];
  const int32_t rows = model.group_first_row[blockIdx.y + 1] - first_row;
  const int32_t per_split = (rows + int32_t(gridDim.z) - 1) / int32_t(gridDim.z);
  const int32_t begin = min(rows, int32_t(blockIdx.z) * per_split);
  const int32_t end = min(rows, begin + per_split);
  // Row begin + i goes through stage i % kStages, for the (i / kStages)-th time: the parity its
  // barrier completes with.
  const auto copy_row = [&](int32_t i) {  // by thread 0 alone
    float4* stage = stages + (i % kStages) * kStageWords;
    uint64_t* barrier = stage_barriers + i % kStages;
    const float4* row = model.rows + size_t(first_row + begin + i) * kRowWords;
    ExpectBytes(barrier, kStageBytes);
    if (kExact) {
      BulkCopy(stage, row, kStageBytes, barrier);
    } else {  // the high parts and the constants, which follow the low parts in the row
      BulkCopy(stage, row, kParamWords * sizeof(float4), barrier);
      BulkCopy(stage + kParamWords, row + 2 * kParamWords,
               kStageBytes - kParamWords * sizeof(float4), barrier);
    }
  };
  if (threadIdx.x == 0) {
#pragma unroll
    for (int i = 0; i < kStages; ++i) InitStageBarrier(stage_barriers + i);
    // The barriers' initialization, visible to the copy engine before its first completion.
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (int32_t i = 0; i < kStages - 1 && begin + i < end; ++i) copy_row(i);
  }
  __syncthreads();

  float4 log_sums[2];  // running log-sums, a float4 per tile
  log_sums[0] = log_sums[1] = make_float4(kPadGconst, kPadGconst, kPadGconst, kPadGconst);
  for (int32_t i = 0; begin + i < end; ++i) {
    WaitStage(stage_barriers + i % kStages, (i / kStages) % 2);
    // No warp still reads the previous row's stage, which the copy below refills.
    __syncthreads();
    if (threadIdx.x == 0 && begin + i + kStages - 1 < end) copy_row(i + kStages - 1);

    const float4* stage = stages + (i % kStages) * kStageWords;
    const float* k = reinterpret_cast<const float*>(stage + kStageWords - kTensorGroupStates / 4);
    // A lane's pair of chunk c and tile n is {u, v} of state 8n + s, dimension 4c + t: its B
    // fragment of the tile.
    const float2* pairs = reinterpret_cast<const float2*>(stage) + threadIdx.x % 32;
    // K plus the products of each pair of chunks, added in float32 from an accumulator that starts
    // at zero (see the header for why): short, independent chains of products, the two tiles'
    // interleaved. 1xTF32: acc is a second chain across the chunks.
    float total[2][4];
    float acc[2][4] = {};
#pragma unroll
    for (int n = 0; n < 2; ++n) {
      const float2 kk = *reinterpret_cast<const float2*>(k + 8 * n + 2 * t());
      total[n][0] = total[n][2] = kk.x;
      total[n][1] = total[n][3] = kk.y;
    }
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
#pragma unroll
      for (int n = 0; n < 2; ++n) {
        const float2 hi = pairs[(2 * c + n) * kTensorLanes];
        const uint32_t b_hi[2] = {__float_as_uint(hi.x), __float_as_uint(hi.y)};
        if constexpr (kExact) {
          const float2 lo = pairs[(2 * (kChunks + c) + n) * kTensorLanes];
          const uint32_t b_lo[2] = {__float_as_uint(lo.x), __float_as_uint(lo.y)};
          MmaTf32(acc[n], a_lo[c], b_hi[0], b_hi[1]);  // the small products first
          MmaTf32(acc[n], a_hi[c], b_lo[0], b_lo[1]);
          MmaTf32(acc[n], a_hi[c], b_hi[0], b_hi[1]);
          if (c % 2 == 1 || c == kChunks - 1) {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              total[n][j] += acc[n][j];
              acc[n][j] = 0.0f;
            }
          }
        } else {
          MmaTf32(c % 2 == 0 ? total[n] : acc[n], a_hi[c], b_hi[0], b_hi[1]);
        }
      }
    }
#pragma unroll
    for (int n = 0; n < 2; ++n) {
      float l[4] = {log_sums[n].x, log_sums[n].y, log_sums[n].z, log_sums[n].w};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        // log2(2^l + 2^x) = max + log2(1 + 2^-|x - l|): one exp2 and one log2 a Gaussian, and one
        // float of state. Every operand is at least kPadGconst, so no NaN arises.
        const float x = kExact ? total[n][j] : total[n][j] + acc[n][j];
        l[j] = fmaxf(l[j], x) + Log2Approx(1.0f + Exp2Approx(-fabsf(x - l[j])));
      }
      log_sums[n] = make_float4(l[0], l[1], l[2], l[3]);
    }
  }

  const int32_t num_slots = model.num_groups * kTensorGroupStates;
#pragma unroll
  for (int n = 0; n < 2; ++n) {
    const float log_sum[4] = {log_sums[n].x, log_sums[n].y, log_sums[n].z, log_sums[n].w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int64_t frame = first_frame() + s() + 8 * (i / 2);
      const int32_t slot = int32_t(blockIdx.y) * kTensorGroupStates + 8 * n + 2 * t() + i % 2;
      if (frame >= num_frames) continue;
      if (gridDim.z == 1) {
        const int32_t state = model.slot_state[slot];
        if (state >= 0) out[frame * model.num_states + state] = log_sum[i] * kLn2;
      } else {
        partial[(int64_t(blockIdx.z) * num_frames + frame) * num_slots + slot] = log_sum[i];
      }
    }
  }
}

// Log-adds the splits' partial sums of each (frame, slot) into the state's score.
__global__ void CombineSplitsKernel(const float* __restrict__ partial, const int32_t splits,
                                    const int32_t num_frames, const int32_t num_slots,
                                    const int32_t* __restrict__ slot_state,
                                    const int32_t num_states, float* __restrict__ out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = int64_t(num_frames) * num_slots;
  if (i >= stride) return;
  const int64_t frame = i / num_slots;
  const int32_t state = slot_state[i - frame * num_slots];
  if (state < 0) return;
  float m = kPadGconst;
  for (int32_t split = 0; split < splits; ++split) m = fmaxf(m, partial[split * stride + i]);
  float sum = 0.0f;
  for (int32_t split = 0; split < splits; ++split) {
    sum += Exp2Approx(partial[split * stride + i] - m);
  }
  out[frame * num_states + state] = (m + Log2Approx(sum)) * kLn2;
}

// A block's dynamic shared memory: the stages, then their barriers.
int32_t SharedBytes(int32_t stage_bytes) {
  return stage_bytes + kStages * int32_t(sizeof(uint64_t));
}

template <bool kExact, size_t... kIndex>
auto SelectKernel(int32_t chunks, std::index_sequence<kIndex...>) {
  using Function = void (*)(TensorModelView, const float*, int32_t, float*, float*);
  static const Function kernels[] = {&TensorScoreKernel<int(kIndex) + 1, kExact>...};
  return kernels[chunks - 1];
}

absl::StatusOr<int32_t> Registers(const void* function) {
  cudaFuncAttributes attributes;
  GMM_CUDA_RETURN_IF_ERROR(cudaFuncGetAttributes(&attributes, function));
  return attributes.numRegs;
}

}  // namespace

absl::StatusOr<TensorKernel> TensorKernel::Create(int32_t dim) {
  const int32_t chunks = (dim + 3) / 4;
  if (dim < 1 || chunks > kTensorMaxChunks) {
    return absl::InvalidArgumentError(absl::StrCat("the tensor-core kernel takes dimensions 1 to ",
                                                   4 * kTensorMaxChunks, ", not ", dim));
  }
  TensorKernel kernel;
  const auto indices = std::make_index_sequence<kTensorMaxChunks>();
  kernel.exact_ = SelectKernel<true>(chunks, indices);
  kernel.fast_ = SelectKernel<false>(chunks, indices);
  kernel.exact_stage_bytes_ = kStages * TensorRowWords(chunks) * int32_t(sizeof(float4));
  kernel.fast_stage_bytes_ =
      kStages * (chunks * kTensorLanes + kTensorGroupStates / 4) * int32_t(sizeof(float4));
  for (const Function function : {kernel.exact_, kernel.fast_}) {
    // Past 48 KB a block's dynamic shared memory needs this cap raised.
    GMM_CUDA_RETURN_IF_ERROR(cudaFuncSetAttribute(reinterpret_cast<const void*>(function),
                                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  SharedBytes(kernel.exact_stage_bytes_)));
  }
  GMM_ASSIGN_OR_RETURN(kernel.exact_registers_,
                       Registers(reinterpret_cast<const void*>(kernel.exact_)));
  GMM_ASSIGN_OR_RETURN(kernel.fast_registers_,
                       Registers(reinterpret_cast<const void*>(kernel.fast_)));
  return kernel;
}

std::string TensorKernel::Summary() const {
  return absl::StrCat("16 frames a warp; 3xTF32: ", exact_registers_, " registers a thread, ",
                      exact_stage_bytes_, " bytes of shared memory a block for its ", kStages,
                      " row stages; 1xTF32: ", fast_registers_, " registers, ", fast_stage_bytes_,
                      " bytes");
}

absl::Status TensorKernel::Launch(const TensorModelView& model, const float* feats,
                                  int32_t num_frames, const CudaKernelConfig& config,
                                  float* split_scratch, float* out, cudaStream_t stream) const {
  if (config.kind == CudaKernelKind::kSimt || config.frame_tiles < 1 ||
      config.frame_tiles > kTensorMaxFrameTiles || config.splits < 1 ||
      config.splits > kTensorMaxSplits ||
      (config.splits > 1 && (split_scratch == nullptr || num_frames > kTensorSplitMaxFrames))) {
    return absl::InvalidArgumentError(
        absl::StrCat("no tensor-kernel launch of ", num_frames, " frames as ", ToString(config)));
  }
  if (num_frames <= 0 || model.num_groups == 0) return absl::OkStatus();
  const int32_t block_frames = kFrameTile * config.frame_tiles;
  const dim3 grid(static_cast<uint32_t>((num_frames + block_frames - 1) / block_frames),
                  static_cast<uint32_t>(model.num_groups), static_cast<uint32_t>(config.splits));
  const dim3 block(static_cast<uint32_t>(32 * config.frame_tiles));
  float* partial = split_scratch;
  void* args[] = {const_cast<TensorModelView*>(&model), &feats, &num_frames, &out, &partial};
  const bool exact = config.kind == CudaKernelKind::kTensor3xTf32;
  GMM_CUDA_RETURN_IF_ERROR(cudaLaunchKernel(
      reinterpret_cast<const void*>(exact ? exact_ : fast_), grid, block, args,
      size_t(SharedBytes(exact ? exact_stage_bytes_ : fast_stage_bytes_)), stream));
  if (config.splits == 1) return absl::OkStatus();
  const int32_t num_slots = model.num_groups * kTensorGroupStates;
  const int64_t elements = int64_t(num_frames) * num_slots;
  CombineSplitsKernel<<<static_cast<uint32_t>((elements + kCombineThreads - 1) / kCombineThreads),
                        kCombineThreads, 0, stream>>>(
      split_scratch, config.splits, num_frames, num_slots, model.slot_state, model.num_states, out);
  return CudaStatus(cudaGetLastError(), "CombineSplitsKernel launch");
}

}  // namespace gmmscore

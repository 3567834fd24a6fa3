#include <utility>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/common/cuda_status.h"
#include "kernels/cuda/common/log2_math.cuh"
#include "kernels/cuda/score/mma_tf32.cuh"
#include "kernels/cuda/score/row_pipeline.cuh"
#include "kernels/cuda/score/simt_model_view.h"  // kPadGconst
#include "kernels/cuda/score/split_combine.h"
#include "kernels/cuda/score/tensor_kernel.h"

namespace gmmscore {
namespace {

// A register cap of 65536 / (kTensorMaxThreads * kMinBlocks) = 128 a thread: the frames'
// operands (8 a chunk), the running log-sums and totals and the operands and accumulators of a few
// chunks in flight fit without spills, and 16 warps share a multiprocessor.
constexpr int32_t kMinBlocks = 2;

// One block: frame tile blockIdx.x (16 frames a warp), group blockIdx.y, slice blockIdx.z of the
// group's rows. Lane 4 s + t holds frames s and s + 8 of its warp's tile against states 2t, 2t + 1
// of each 8-state half of the group (the accumulator fragment), as running log-sums in log2 units.
template <int kChunks, bool kExact>
__global__ void __launch_bounds__(kTensorMaxThreads, kMinBlocks)
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
  // The fragments' coordinates (lane = 4 s + t), recomputed where needed rather than kept live
  // through the row loop, whose registers are at their cap.
  const auto s = [] { return int32_t(threadIdx.x % 32) / 4; };
  const auto t = [] { return int32_t(threadIdx.x % 4); };

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
      const int64_t frame = WarpFirstFrame() + s() + 8 * h;
      if (d < model.dim && frame < num_frames) x[h] = feats[frame * model.dim + d] - model.shift[d];
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      SplitTf32(x[h], a_hi[c][h], a_lo[c][h]);
      SplitTf32(x[h] * x[h], a_hi[c][2 + h], a_lo[c][2 + h]);
    }
  }

  const auto copy_row = [&](float4* stage, int32_t row_index, uint64_t* barrier) {
    const float4* row = model.rows + size_t(row_index) * kRowWords;
    ExpectBytes(barrier, kStageBytes);
    if (kExact) {
      BulkCopy(stage, row, kStageBytes, barrier);
    } else {  // the high parts and the constants, which follow the low parts in the row
      BulkCopy(stage, row, kParamWords * sizeof(float4), barrier);
      BulkCopy(stage + kParamWords, row + 2 * kParamWords,
               kStageBytes - kParamWords * sizeof(float4), barrier);
    }
  };
  float4 log_sums[2];  // running log-sums, a float4 per tile
  log_sums[0] = log_sums[1] = make_float4(kPadGconst, kPadGconst, kPadGconst, kPadGconst);
  const auto score_row = [&](const float4* stage) {
    const float* k = reinterpret_cast<const float*>(stage + kStageWords - kTensorGroupStates / 4);
    // A lane's pair of chunk c and tile n is {u, v} of state 8n + s, dimension 4c + t: its B
    // fragment of the tile.
    const float2* pairs = reinterpret_cast<const float2*>(stage) + threadIdx.x % 32;
    // K plus the products of each pair of chunks, added in float32 from an accumulator that starts
    // at zero (see the header for why): short, independent chains of products, the two tiles'
    // interleaved. 1xTF32: acc is a second chain across the chunks.
    float total[2][4];
    float acc[2][4] = {};
    StartFromConstants(k, total);
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
      if constexpr (kExact) {
        log_sums[n] = LogAdd(log_sums[n], total[n]);
      } else {
        const float x[4] = {total[n][0] + acc[n][0], total[n][1] + acc[n][1],
                            total[n][2] + acc[n][2], total[n][3] + acc[n][3]};
        log_sums[n] = LogAdd(log_sums[n], x);
      }
    }
  };
  ForEachStagedRow<kStageWords>(stages, RowsOfThisSplit(model.group_first_row), copy_row,
                                score_row);
  StoreLogSums(model, log_sums, num_frames, out, partial);
}

template <bool kExact, size_t... kIndex>
TensorKernelFunction SelectKernel(int32_t chunks, std::index_sequence<kIndex...>) {
  static const TensorKernelFunction kernels[] = {&TensorScoreKernel<int(kIndex) + 1, kExact>...};
  return kernels[chunks - 1];
}

}  // namespace

absl::StatusOr<TensorKernel::Variant> TensorKernel::MakeVariant(TensorKernelFunction function,
                                                                int32_t stage_bytes) {
  const void* entry = reinterpret_cast<const void*>(function);
  // Past 48 KB a block's dynamic shared memory needs this cap raised.
  GMM_CUDA_RETURN_IF_ERROR(cudaFuncSetAttribute(entry, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                TensorSharedBytes(stage_bytes)));
  cudaFuncAttributes attributes;
  GMM_CUDA_RETURN_IF_ERROR(cudaFuncGetAttributes(&attributes, entry));
  return Variant{function, stage_bytes, attributes.numRegs};
}

const TensorKernel::Variant& TensorKernel::VariantOf(CudaKernelKind kind) const {
  return kind == CudaKernelKind::kTensor3xTf32   ? exact_
         : kind == CudaKernelKind::kTensor1xTf32 ? fast_
                                                 : f16_;
}

absl::StatusOr<TensorKernel> TensorKernel::Create(int32_t dim) {
  const int32_t chunks = (dim + 3) / 4;
  if (dim < 1 || chunks > kTensorMaxChunks) {
    return absl::InvalidArgumentError(absl::StrCat("the tensor-core kernel takes dimensions 1 to ",
                                                   4 * kTensorMaxChunks, ", not ", dim));
  }
  TensorKernel kernel;
  const auto indices = std::make_index_sequence<kTensorMaxChunks>();
  constexpr int32_t kWordBytes = sizeof(float4);
  GMM_ASSIGN_OR_RETURN(kernel.exact_,
                       MakeVariant(SelectKernel<true>(chunks, indices),
                                   kTensorStages * TensorRowWords(chunks) * kWordBytes));
  GMM_ASSIGN_OR_RETURN(
      kernel.fast_,
      MakeVariant(SelectKernel<false>(chunks, indices),
                  kTensorStages * (chunks * kTensorLanes + kTensorGroupStates / 4) * kWordBytes));
  GMM_ASSIGN_OR_RETURN(kernel.f16_,
                       MakeVariant(TensorF16KernelFor(chunks),
                                   kTensorStages * TensorF16RowWords(chunks) * kWordBytes));
  return kernel;
}

std::string TensorKernel::Summary() const {
  const auto describe = [](const char* name, const Variant& variant) {
    return absl::StrCat(name, ": ", variant.registers, " registers a thread, ", variant.stage_bytes,
                        " bytes of shared memory a block for its ", kTensorStages, " row stages");
  };
  return absl::StrCat("16 frames a warp; ", describe("3xF16", f16_), "; ",
                      describe("3xTF32", exact_), "; ", describe("1xTF32", fast_));
}

absl::Status TensorKernel::Launch(const TensorModelView& model, const float* feats,
                                  int32_t num_frames, const CudaKernelConfig& config,
                                  float* split_scratch, float* out, cudaStream_t stream) const {
  if (config.kind == CudaKernelKind::kSimt || config.frame_tiles < 1 ||
      config.frame_tiles > kTensorMaxFrameTiles || config.splits < 1 ||
      config.splits > kMaxSplits ||
      (config.splits > 1 && (split_scratch == nullptr || num_frames > kSplitMaxFrames))) {
    return absl::InvalidArgumentError(
        absl::StrCat("no tensor-kernel launch of ", num_frames, " frames as ", ToString(config)));
  }
  if (num_frames <= 0 || model.num_groups == 0) return absl::OkStatus();
  const int32_t block_frames = kTensorFrameTile * config.frame_tiles;
  const dim3 grid(static_cast<uint32_t>((num_frames + block_frames - 1) / block_frames),
                  static_cast<uint32_t>(model.num_groups), static_cast<uint32_t>(config.splits));
  const dim3 block(static_cast<uint32_t>(32 * config.frame_tiles));
  float* partial = split_scratch;
  void* args[] = {const_cast<TensorModelView*>(&model), &feats, &num_frames, &out, &partial};
  const Variant& variant = VariantOf(config.kind);
  GMM_CUDA_RETURN_IF_ERROR(
      cudaLaunchKernel(reinterpret_cast<const void*>(variant.function), grid, block, args,
                       size_t(TensorSharedBytes(variant.stage_bytes)), stream));
  if (config.splits == 1) return absl::OkStatus();
  return CombineSplits(split_scratch, config.splits, num_frames,
                       model.num_groups * kTensorGroupStates, model.slot_state, model.num_states,
                       out, stream);
}

}  // namespace gmmscore

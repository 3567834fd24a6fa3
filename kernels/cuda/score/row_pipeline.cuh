// What the tensor-core kernels (tensor_kernel.cu, tensor_f16_kernel.cu) share: their blocking
// and the pipeline that streams a group's rows through shared memory. A row's stage fills by a bulk
// copy (the copy engine, one thread issuing) that completes on an mbarrier per stage, which the
// block's threads wait on (PTX ISA: mbarrier, cp.async.bulk).
#pragma once

#include <cstdint>

#include "kernels/cuda/common/log2_math.cuh"
#include "kernels/cuda/score/tensor_kernel.h"  // kTensorMaxFrameTiles
#include "kernels/cuda/score/tensor_model_view.h"

namespace gmmscore {

inline constexpr int32_t kTensorFrameTile = 16;  // frames of a warp: the products' M
inline constexpr int32_t kTensorStages = 4;      // rows in flight through shared memory
inline constexpr int32_t kTensorMaxThreads = kTensorMaxFrameTiles * 32;

__device__ __forceinline__ uint32_t SharedAddress(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void InitStageBarrier(uint64_t* barrier) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(SharedAddress(barrier)) : "memory");
}

// After every stage barrier's InitStageBarrier: visible to the copy engine before its first
// completion.
__device__ __forceinline__ void FenceBarrierInit() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
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

// A block's dynamic shared memory: the stages, then their barriers.
inline int32_t TensorSharedBytes(int32_t stage_bytes) {
  return stage_bytes + kTensorStages * int32_t(sizeof(uint64_t));
}

// The rows [begin, end) of a block's group that its split (blockIdx.z of gridDim.z) log-adds.
struct SplitRows {
  int32_t first_row;  // the group's first row
  int32_t begin;
  int32_t end;
};

__device__ __forceinline__ SplitRows RowsOfThisSplit(const int32_t* group_first_row) {
  const int32_t first_row = group_first_row[blockIdx.y];
  const int32_t rows = group_first_row[blockIdx.y + 1] - first_row;
  const int32_t per_split = (rows + int32_t(gridDim.z) - 1) / int32_t(gridDim.z);
  const int32_t begin = min(rows, int32_t(blockIdx.z) * per_split);
  return {first_row, begin, min(rows, begin + per_split)};
}

// Runs body(stage) for each row of `rows`, in order, with the row's stage of kStageWords words in
// shared memory (stages: kTensorStages of them, then their barriers). copy_row(stage, row,
// barrier), called by thread 0 alone, starts the bulk copies of group row `row` (the index into
// the layout's rows) into `stage`, completing on `barrier`. Row rows.begin + i goes through stage
// i % kTensorStages, for the (i / kTensorStages)-th time: the parity its barrier completes with.
// Every thread of the block must call this.
template <int32_t kStageWords, typename Word, typename CopyRow, typename Body>
__device__ __forceinline__ void ForEachStagedRow(Word* stages, const SplitRows& rows,
                                                 CopyRow copy_row, Body body) {
  uint64_t* const barriers = reinterpret_cast<uint64_t*>(stages + kTensorStages * kStageWords);
  const auto issue = [&](int32_t i) {
    copy_row(stages + (i % kTensorStages) * kStageWords, rows.first_row + rows.begin + i,
             barriers + i % kTensorStages);
  };
  if (threadIdx.x == 0) {
#pragma unroll
    for (int i = 0; i < kTensorStages; ++i) InitStageBarrier(barriers + i);
    FenceBarrierInit();
    for (int32_t i = 0; i < kTensorStages - 1 && rows.begin + i < rows.end; ++i) issue(i);
  }
  __syncthreads();
  for (int32_t i = 0; rows.begin + i < rows.end; ++i) {
    WaitStage(barriers + i % kTensorStages, uint32_t(i / kTensorStages) % 2);
    // No warp still reads the previous row's stage, which the copy below refills.
    __syncthreads();
    if (threadIdx.x == 0 && rows.begin + i + kTensorStages - 1 < rows.end) {
      issue(i + kTensorStages - 1);
    }
    body(static_cast<const Word*>(stages + (i % kTensorStages) * kStageWords));
  }
}

// The first frame of the calling warp's tile: blockIdx.x covers blockDim.x / 32 tiles.
__device__ __forceinline__ int64_t WarpFirstFrame() {
  return (int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32) * kTensorFrameTile;
}

// Stores a lane's running log-sums (log2 units) where the accumulator fragments put them: lane
// 4 s + t holds frames s and s + 8 of its warp's tile against slots 2t and 2t + 1 of each of the
// group's two 8-state tiles. With one split, as scores (nats) of the states; with several, as the
// split's partial log-sums, which CombineSplitsKernel log-adds.
__device__ __forceinline__ void StoreLogSums(const TensorModelView& model,
                                             const float4 (&log_sums)[2], int32_t num_frames,
                                             float* __restrict__ out, float* __restrict__ partial) {
  const int32_t s = int32_t(threadIdx.x % 32) / 4;
  const int32_t t = int32_t(threadIdx.x % 4);
  const int32_t num_slots = model.num_groups * kTensorGroupStates;
#pragma unroll
  for (int n = 0; n < 2; ++n) {
    const float log_sum[4] = {log_sums[n].x, log_sums[n].y, log_sums[n].z, log_sums[n].w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int64_t frame = WarpFirstFrame() + s + 8 * (i / 2);
      const int32_t slot = int32_t(blockIdx.y) * kTensorGroupStates + 8 * n + 2 * t + i % 2;
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

// A lane's accumulator elements (frames s, s + 8 against slots 2t, 2t + 1 of each tile) set to the
// row's constants K of those slots; k: the row's kTensorGroupStates constants in shared memory.
__device__ __forceinline__ void StartFromConstants(const float* k, float (&total)[2][4]) {
  const int32_t t = int32_t(threadIdx.x % 4);
#pragma unroll
  for (int n = 0; n < 2; ++n) {
    const float2 kk = *reinterpret_cast<const float2*>(k + 8 * n + 2 * t);
    total[n][0] = total[n][2] = kk.x;
    total[n][1] = total[n][3] = kk.y;
  }
}

// log2(2^l + 2^x) = max + log2(1 + 2^-|x - l|), for each of a lane's 4 accumulator elements: one
// exp2 and one log2 a Gaussian, and one float of state. Every operand is at least kPadGconst, so
// no NaN arises.
__device__ __forceinline__ float4 LogAdd(float4 log_sum, const float (&x)[4]) {
  float l[4] = {log_sum.x, log_sum.y, log_sum.z, log_sum.w};
#pragma unroll
  for (int j = 0; j < 4; ++j)
    l[j] = fmaxf(l[j], x[j]) + Log2Approx(1.0f + Exp2Approx(-fabsf(x[j] - l[j])));
  return make_float4(l[0], l[1], l[2], l[3]);
}

}  // namespace gmmscore

// The tensor-core scoring kernel and its launcher. A warp scores 16 frames against one group of
// kTensorGroupStates states (tensor_model_layout.h): per Gaussian row, the expanded form as
// mma.sync m16n8k8 TF32 products (frames x [x', x'^2] by [u; v] x states), summed from K, then a
// log-add of the sums into per-(frame, state) running sums. Nothing of the Gaussian-by-frame
// matrix leaves the multiprocessor.
//
// Float32 accuracy (CudaKernelKind::kTensor3xTf32): every operand is split as a = hi + lo with
// hi = tf32(a) (the frames here, the parameters once in the layout), and
// a.b = hi.hi + hi.lo + lo.hi (the lo.lo term is below float32 rounding). The tensor cores
// truncate as they accumulate, so the products of each pair of chunks of 4 dimensions start from
// zero and are added to the running sum in float32: one accumulator across all chunks piles up
// that truncation past 1e-3 nats (docs/PERFORMANCE.md). The short chains of products also keep
// several in flight a warp, which the kernel needs with 4 warps a scheduler.
// kTensor1xTf32 does hi.hi alone, in two chains across the chunks: a third of the products.
// kTensor3xF16 (tensor_f16_kernel.h) does the 3xTF32 split's products in half precision, scaled
// into its range: half the tensor-core instructions for the same accuracy.
//
// A block is frame_tiles warps (16 x frame_tiles frames) of one group; the group's rows stream
// through shared memory, kStages deep, by bulk copies on the copy engine, each row read by all of
// the block's warps. With splits > 1, splits blocks share a group's rows, each log-adding a
// contiguous slice into a scratch buffer that a second kernel combines: more blocks for short
// windows and few groups.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "kernels/cuda/score/kernel_config.h"
#include "kernels/cuda/score/tensor_f16_kernel.h"
#include "kernels/cuda/score/tensor_model_view.h"

namespace gmmscore {

inline constexpr int32_t kTensorMaxFrameTiles = 8;
class TensorKernel {
 public:
  // Fails with InvalidArgument for a dimension past 4 x kTensorMaxChunks.
  static absl::StatusOr<TensorKernel> Create(int32_t dim);

  // Scores num_frames frames of feats (device, frames x dim, row-major, not shifted) into out
  // (device, frames x num_states, the model's state order) with config's kind (a tensor kind)
  // and blocking. split_scratch (device) holds splits x num_frames x model.num_groups x
  // kTensorGroupStates floats where config.splits > 1, and may be null otherwise. Asynchronous.
  absl::Status Launch(const TensorModelView& model, const float* feats, int32_t num_frames,
                      const CudaKernelConfig& config, float* split_scratch, float* out,
                      cudaStream_t stream) const;

  // Registers per thread and shared memory per block of each kind, for reports.
  std::string Summary() const;

 private:
  // One tensor kind's kernel for the model's chunk count.
  struct Variant {
    TensorKernelFunction function = nullptr;
    int32_t stage_bytes = 0;  // shared memory of the row stages
    int32_t registers = 0;
  };
  static absl::StatusOr<Variant> MakeVariant(TensorKernelFunction function, int32_t stage_bytes);
  const Variant& VariantOf(CudaKernelKind kind) const;

  Variant exact_;  // kTensor3xTf32
  Variant fast_;   // kTensor1xTf32
  Variant f16_;    // kTensor3xF16
};

}  // namespace gmmscore

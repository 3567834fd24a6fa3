// The tensor-core kernel's layout of a model (tensor_kernel.h), built once on the host from a
// GmmModel and uploaded once. The kernel computes, per Gaussian and frame, the expanded form
// K + sum_d x'_d u_d + x'_d^2 v_d as a matrix product of frames [x', x'^2] (16 frames per warp, the
// m16n8k8 product's A) by parameters [u; v] (8 states per tile, its B), the values of
// ExpandGaussian (cuda_packed_model.h: shifted, log2 units):
//
//  - States are sorted by Gaussian count (descending, stable) and cut into groups of
//    kTensorGroupStates; each group is padded to its largest count with dummy Gaussians (u = v = 0,
//    K = kPadGconst), the last group with dummy states. slot_state maps slots back to states.
//  - Row j of a group holds Gaussian j of each of its 16 states; group g owns rows
//    [group_first_row[g], group_first_row[g + 1]).
//  - A row is TensorRowWords(chunks) float4 words, contiguous, one shared-memory stage of the
//    kernel. Dimensions are cut into chunks of 4, states into two tiles of 8; the float pair
//    (chunk * 2 + tile) * kTensorLanes + lane is what lane (lane = 4 s + t, s < 8, t < 4) of a
//    warp loads as its B operand of the tile: {u, v} of state 8 tile + s, dimension 4 chunk + t.
//    In the product's k order, a chunk's k = t is x' u and k = 4 + t is x'^2 v of that dimension,
//    so one 8-byte load a lane gives the fragment and a warp's loads are 256 consecutive bytes
//    (two shared-memory wavefronts, no bank conflicts).
//  - Each parameter is stored split for the 3xTF32 products, as hi = tf32(p) (round to nearest,
//    ties away, as cvt.rna.tf32.f32) in the first chunks * kTensorLanes words and lo = p - hi,
//    exact in float32, in as many words after them: splitting once here spares every warp of
//    every launch the 3 instructions a value. The row's last 4 words are the constants K of its
//    16 slots, the accumulators' starting values.
//  - The 3xF16 kernel's rows (tensor_f16_kernel.h) hold the same values in half precision, one
//    16-byte word a lane, tile and pair of chunks (2p, 2p + 1), word (2p + tile) * kTensorLanes +
//    lane: half2 {u, v} of the high parts of chunk 2p, of 2p + 1, then of their low parts (zero
//    past the last chunk), where column d's u (and, apart, its v) are first scaled by 2^s so that
//    the column's largest magnitude over the model lies in [2^13, 2^14), high = half(p 2^s) and low
//    = half((p 2^s - high) 2^11); column_scale holds the 2^-s the kernel multiplies the frames' x'
//    (and x'^2) by. The row's constants follow as 4 float4 words.
//  - A layout holds the rows of the formats asked for: the 3xTF32 and 1xTF32 kernels read `rows`,
//    the 3xF16 kernel `rows_f16`.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cuda/common/cuda_buffers.h"
#include "kernels/cuda/score/tensor_model_view.h"
#include "model/gmm_model.h"

namespace gmmscore {

struct TensorModelLayout {
  int32_t dim = 0;
  int32_t chunks = 0;  // padded dimension / 4
  int32_t num_states = 0;
  int32_t num_groups = 0;
  std::vector<float> shift;              // [dim]
  std::vector<int32_t> group_first_row;  // [num_groups + 1]
  std::vector<int32_t> slot_state;       // [num_groups * kTensorGroupStates], -1: dummy slot
  std::vector<float> rows;               // [rows][TensorRowWords(chunks)][4], or empty
  std::vector<uint32_t> rows_f16;        // [rows][TensorF16RowWords(chunks)][4], or empty
  std::vector<float> column_scale;       // [2][dim] where rows_f16 is built

  int32_t num_slots() const { return num_groups * kTensorGroupStates; }
  int64_t device_bytes() const;  // what Upload allocates
};

// Whether the tensor kernel takes models of this dimension and state count (its operands for
// kTensorMaxChunks chunks at most; groups are a grid dimension).
bool TensorKernelSupports(int32_t dim, int32_t num_states);

// Which rows a layout holds: what the kernels that may run read.
struct TensorRowFormats {
  bool tf32 = true;  // `rows`: the 3xTF32 and 1xTF32 kernels
  bool f16 = true;   // `rows_f16` and `column_scale`: the 3xF16 kernel
};

// shift: the per-dimension shift of the model's CUDA layout (CudaModelLayout::shift). Fails with
// InvalidArgument where TensorKernelSupports does not hold.
absl::StatusOr<TensorModelLayout> BuildTensorModelLayout(const GmmModel& model,
                                                         const std::vector<float>& shift,
                                                         TensorRowFormats formats = {});

// The layout resident on the current device.
class TensorPackedModel {
 public:
  static absl::StatusOr<TensorPackedModel> Upload(const TensorModelLayout& layout);

  TensorModelView view() const { return view_; }
  int64_t device_bytes() const { return device_bytes_; }

 private:
  DeviceArray<float> rows_;
  DeviceArray<uint32_t> rows_f16_;
  DeviceArray<float> column_scale_;
  DeviceArray<int32_t> group_first_row_;
  DeviceArray<int32_t> slot_state_;
  DeviceArray<float> shift_;
  TensorModelView view_;
  int64_t device_bytes_ = 0;
};

}  // namespace gmmscore

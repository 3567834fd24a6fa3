// The CUDA backend's layout of a model (Vaněk, Trmal, Psutka and Psutka, "Optimization of the
// Gaussian Mixture Model Evaluation on GPU", Interspeech 2011, sections 4 to 4.1), built once on
// the host from a GmmModel and uploaded once:
//
//  - States are sorted by Gaussian count (descending, stable) and cut into groups of
//    kGroupStates, one thread block's worth. Every state of a group is padded with dummy Gaussians
//    (u = v = 0, K = kPadGconst) to the group's largest count, rounded up to a quad; the last
//    group is filled with dummy states. slot_state maps a group's slots back to the model's states,
//    so the kernel writes scores in the model's own order.
//  - A thread scores kQuadGauss = 4 Gaussians of its state at a time (a "quad"), so every
//    shared-memory load of 4 dimensions of a frame feeds 16 FMAs, and each frame value sits in
//    one register across four consecutive FMAs.
//  - Dimensions are padded to a multiple of 4 and read as float4. The parameters are stored in the
//    exact order the kernel reads them: params[quad][chunk][u0..u3, v0..v3][slot], each a float4
//    holding dimensions 4 chunk .. 4 chunk + 3, so the threads of a group read consecutive 16-byte
//    words. The constants K are apart: gconst[quad][Gaussian of the quad][slot].
//  - Group g owns quads [group_first_quad[g], group_first_quad[g + 1]): the offset vector.
//  - Features and means are shifted by c, the per-dimension mean of all means (x' = x - c,
//    mu' = mu - c), which keeps the cancellation of the expanded form K + sum x'u + x'^2 v small
//    (the same shift as CpuPackedModel; see kernels/cpu/packed_model.h).
//  - u = mu'/var, v = -1/(2 var) and K are scaled by log2(e): the kernel log-adds with the
//    hardware exp2/log2 instructions and multiplies by ln 2 once on output.
//  - Outlier Gaussians (model/expanded_form.h) get K = kPadGconst like padding; the guard kernel
//    (score_guard_kernel.h) scores them apart, from the guard arrays below, which are built with
//    the layout because the guard's fallback reads the layout.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cuda/common/cuda_buffers.h"
#include "kernels/cuda/score/guard_model_view.h"
#include "kernels/cuda/score/simt_model_view.h"
#include "model/gmm_model.h"

namespace gmmscore {

// Host side of the layout; see the file comment for the order of params and gconst.
struct CudaModelLayout {
  int32_t dim = 0;
  int32_t chunks = 0;  // padded dimension / 4
  int32_t num_states = 0;
  int32_t num_groups = 0;
  std::vector<float> shift;               // [dim]
  std::vector<int32_t> group_first_quad;  // [num_groups + 1]
  std::vector<int32_t> slot_state;        // [num_groups * kGroupStates], -1 for dummy slots
  // [quads][chunks][kQuadSlots][kGroupStates] float4, plus one chunk of slack at the end: the
  // kernel prefetches the chunk after the one it computes, also after its group's last.
  std::vector<float> params;
  std::vector<float> gconst;  // [quads][kQuadGauss][kGroupStates]
  // For the guard (guard_model_view.h has the meaning of each).
  std::vector<StateGuard> guards;
  std::vector<int32_t> outlier_begin;
  std::vector<float> outlier_params;
  std::vector<float> outlier_lconst;
  std::vector<int32_t> state_slot;
  std::vector<int32_t> state_gauss;
  std::vector<float> lconst;  // as gconst

  int64_t device_bytes() const;  // what Upload allocates
};

// Fails with InvalidArgument when the model has more groups than a grid dimension holds, or more
// Gaussians than the kernel's 32-bit indices reach.
absl::StatusOr<CudaModelLayout> BuildCudaModelLayout(const GmmModel& model);

// The expanded form of one Gaussian in log2 units, shifted by shift (see the file comment):
// writes u[d] and v[d] for d < dim and returns K (kPadGconst for a zero weight). Every CUDA layout
// stores these same values, so the kernels differ only in the order of their arithmetic.
float ExpandGaussian(const GmmModel& model, int64_t gauss, const std::vector<float>& shift,
                     float* u, float* v);

// The layout resident on the current device.
class CudaPackedModel {
 public:
  static absl::StatusOr<CudaPackedModel> Upload(const CudaModelLayout& layout);

  SimtModelView view() const { return view_; }
  GuardModelView guard_view() const { return guard_view_; }
  int64_t device_bytes() const { return device_bytes_; }

 private:
  DeviceArray<float> params_;
  DeviceArray<float> gconst_;
  DeviceArray<int32_t> group_first_quad_;
  DeviceArray<int32_t> slot_state_;
  DeviceArray<float> shift_;
  DeviceArray<StateGuard> guards_;
  DeviceArray<int32_t> outlier_begin_;
  DeviceArray<float> outlier_params_;
  DeviceArray<float> outlier_lconst_;
  DeviceArray<int32_t> state_slot_;
  DeviceArray<int32_t> state_gauss_;
  DeviceArray<float> lconst_;
  SimtModelView view_;
  GuardModelView guard_view_;
  int64_t device_bytes_ = 0;
};

}  // namespace gmmscore

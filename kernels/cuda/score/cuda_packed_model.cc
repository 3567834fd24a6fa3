#include "kernels/cuda/score/cuda_packed_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "model/expanded_form.h"

namespace gmmscore {
namespace {

constexpr int64_t kMaxGridY = 65535;  // groups are the grid's y dimension

template <typename T>
int64_t VectorBytes(const std::vector<T>& v) {
  return static_cast<int64_t>(v.size() * sizeof(T));
}

}  // namespace

int64_t CudaModelLayout::device_bytes() const {
  return VectorBytes(shift) + VectorBytes(group_first_quad) + VectorBytes(slot_state) +
         VectorBytes(params) + VectorBytes(gconst) + VectorBytes(guards) +
         VectorBytes(outlier_begin) + VectorBytes(outlier_params) + VectorBytes(outlier_lconst) +
         VectorBytes(state_slot) + VectorBytes(state_gauss) + VectorBytes(lconst);
}

absl::StatusOr<CudaModelLayout> BuildCudaModelLayout(const GmmModel& model) {
  CudaModelLayout layout;
  const int32_t dim = model.dim();
  layout.dim = dim;
  layout.chunks = (dim + 3) / 4;
  layout.num_states = model.num_states();
  layout.num_groups = (layout.num_states + kGroupStates - 1) / kGroupStates;
  if (layout.num_groups > kMaxGridY) {
    return absl::InvalidArgumentError(absl::StrCat("the CUDA backend takes at most ",
                                                   kMaxGridY * kGroupStates,
                                                   " states, the model has ", layout.num_states));
  }
  layout.shift = MeanOfMeans(model);

  // Sorting by count makes the padding of a group to its largest state small.
  std::vector<int32_t> order(layout.num_states);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&model](int32_t a, int32_t b) {
    return model.num_gauss_in(a) > model.num_gauss_in(b);
  });
  layout.slot_state.assign(size_t(layout.num_groups) * kGroupStates, -1);
  std::copy(order.begin(), order.end(), layout.slot_state.begin());

  layout.group_first_quad.assign(layout.num_groups + 1, 0);
  int64_t quads = 0;
  for (int32_t g = 0; g < layout.num_groups; ++g) {
    // Descending order: the group's first state has its largest count.
    const int32_t largest = model.num_gauss_in(layout.slot_state[size_t(g) * kGroupStates]);
    quads += (largest + kQuadGauss - 1) / kQuadGauss;
    // The kernel indexes K with 32 bits.
    if (quads * kQuadGauss * kGroupStates > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the model has too many Gaussians for the CUDA backend: ", model.num_gauss()));
    }
    layout.group_first_quad[g + 1] = static_cast<int32_t>(quads);
  }

  const size_t chunk_floats = size_t(kQuadSlots) * kGroupStates * 4;
  const size_t quad_floats = size_t(layout.chunks) * chunk_floats;
  layout.params.assign(size_t(quads) * quad_floats + chunk_floats, 0.0f);
  layout.gconst.assign(size_t(quads) * kQuadGauss * kGroupStates, kPadGconst);
  layout.lconst.assign(layout.gconst.size(), kPadGconst);
  layout.state_slot.assign(size_t(layout.num_states), 0);
  layout.state_gauss.assign(size_t(layout.num_states), 0);

  std::vector<float> u(dim);
  std::vector<float> v(dim);
  for (int32_t g = 0; g < layout.num_groups; ++g) {
    for (int32_t slot = 0; slot < kGroupStates; ++slot) {
      const int32_t state = layout.slot_state[size_t(g) * kGroupStates + slot];
      if (state < 0) continue;
      layout.state_slot[size_t(state)] = g * kGroupStates + slot;
      layout.state_gauss[size_t(state)] = model.num_gauss_in(state);
      for (int32_t i = 0; i < model.num_gauss_in(state); ++i) {
        const int64_t quad = layout.group_first_quad[g] + i / kQuadGauss;
        const int32_t in_quad = i % kQuadGauss;
        const float k =
            ExpandGaussian(model, model.gauss_begin(state) + i, layout.shift, u.data(), v.data());
        for (int32_t d = 0; d < dim; ++d) {
          const size_t word = size_t(quad) * quad_floats + size_t(d / 4) * chunk_floats;
          const size_t u_at = word + (size_t(in_quad) * kGroupStates + slot) * 4 + d % 4;
          const size_t v_at = u_at + size_t(kQuadGauss) * kGroupStates * 4;
          layout.params[u_at] = u[d];
          layout.params[v_at] = v[d];
        }
        const size_t k_at = (size_t(quad) * kQuadGauss + in_quad) * kGroupStates + slot;
        layout.gconst[k_at] = k;
        if (k != kPadGconst) {
          layout.lconst[k_at] =
              static_cast<float>(DirectConstant(model, model.gauss_begin(state) + i));
        }
      }
    }
  }

  layout.guards = StateGuards(model, layout.shift);
  const Outliers outliers = FindOutliers(model, layout.shift);
  layout.outlier_begin.assign(outliers.state_begin.begin(), outliers.state_begin.end());
  for (const int64_t g : outliers.gauss) {
    AppendDirectForm(model, g, &layout.outlier_params, &layout.outlier_lconst);
  }
  return layout;
}

float ExpandGaussian(const GmmModel& model, int64_t gauss, const std::vector<float>& shift,
                     float* u, float* v) {
  const double k = ExpandGaussian(model, gauss, shift, std::numbers::log2e, u, v);
  // A zero weight gives K = -inf; the dummy value keeps the log-add free of NaN.
  return std::isfinite(k) ? static_cast<float>(std::numbers::log2e * k) : kPadGconst;
}

absl::StatusOr<CudaPackedModel> CudaPackedModel::Upload(const CudaModelLayout& layout) {
  CudaPackedModel packed;
  GMM_ASSIGN_OR_RETURN(packed.params_, UploadToDevice(layout.params));
  GMM_ASSIGN_OR_RETURN(packed.gconst_, UploadToDevice(layout.gconst));
  GMM_ASSIGN_OR_RETURN(packed.group_first_quad_, UploadToDevice(layout.group_first_quad));
  GMM_ASSIGN_OR_RETURN(packed.slot_state_, UploadToDevice(layout.slot_state));
  GMM_ASSIGN_OR_RETURN(packed.shift_, UploadToDevice(layout.shift));
  GMM_ASSIGN_OR_RETURN(packed.guards_, UploadToDevice(layout.guards));
  GMM_ASSIGN_OR_RETURN(packed.outlier_begin_, UploadToDevice(layout.outlier_begin));
  GMM_ASSIGN_OR_RETURN(packed.outlier_params_, UploadToDevice(layout.outlier_params));
  GMM_ASSIGN_OR_RETURN(packed.outlier_lconst_, UploadToDevice(layout.outlier_lconst));
  GMM_ASSIGN_OR_RETURN(packed.state_slot_, UploadToDevice(layout.state_slot));
  GMM_ASSIGN_OR_RETURN(packed.state_gauss_, UploadToDevice(layout.state_gauss));
  GMM_ASSIGN_OR_RETURN(packed.lconst_, UploadToDevice(layout.lconst));
  packed.guard_view_ = {.guards = packed.guards_.get(),
                        .outlier_begin = packed.outlier_begin_.get(),
                        .outlier_params = packed.outlier_params_.get(),
                        .outlier_lconst = packed.outlier_lconst_.get(),
                        .state_slot = packed.state_slot_.get(),
                        .state_gauss = packed.state_gauss_.get(),
                        .lconst = packed.lconst_.get()};
  SimtModelView& view = packed.view_;
  view.params = reinterpret_cast<const float4*>(packed.params_.get());
  view.gconst = packed.gconst_.get();
  view.group_first_quad = packed.group_first_quad_.get();
  view.slot_state = packed.slot_state_.get();
  view.shift = packed.shift_.get();
  view.dim = layout.dim;
  view.chunks = layout.chunks;
  view.num_states = layout.num_states;
  view.num_groups = layout.num_groups;
  packed.device_bytes_ = layout.device_bytes();
  return packed;
}

}  // namespace gmmscore

#include "kernels/cuda/tensor_model_layout.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/cuda_packed_model.h"  // ExpandGaussian

namespace gmmscore {
namespace {

constexpr int64_t kMaxGridY = 65535;  // groups are the grid's y dimension

// p rounded to TF32 (nearest, ties away, as cvt.rna.tf32.f32): the high part the layout stores;
// p minus it, exact in float32, is the low part.
float HighPart(float p) {
  return std::bit_cast<float>((std::bit_cast<uint32_t>(p) + 0x1000u) & 0xffffe000u);
}

template <typename T>
int64_t VectorBytes(const std::vector<T>& v) {
  return static_cast<int64_t>(v.size() * sizeof(T));
}

}  // namespace

int64_t TensorModelLayout::device_bytes() const {
  return VectorBytes(shift) + VectorBytes(group_first_row) + VectorBytes(slot_state) +
         VectorBytes(rows);
}

bool TensorKernelSupports(int32_t dim, int32_t num_states) {
  const int64_t groups = (int64_t(num_states) + kTensorGroupStates - 1) / kTensorGroupStates;
  return dim >= 1 && (dim + 3) / 4 <= kTensorMaxChunks && groups <= kMaxGridY;
}

absl::StatusOr<TensorModelLayout> BuildTensorModelLayout(const GmmModel& model,
                                                         const std::vector<float>& shift) {
  if (!TensorKernelSupports(model.dim(), model.num_states())) {
    return absl::InvalidArgumentError(
        absl::StrCat("the tensor-core kernel takes dimensions up to ", 4 * kTensorMaxChunks,
                     " and up to ", kMaxGridY * kTensorGroupStates, " states; the model has ",
                     model.dim(), " and ", model.num_states()));
  }
  TensorModelLayout layout;
  const int32_t dim = model.dim();
  layout.dim = dim;
  layout.chunks = (dim + 3) / 4;
  layout.num_states = model.num_states();
  layout.num_groups = (layout.num_states + kTensorGroupStates - 1) / kTensorGroupStates;
  layout.shift = shift;

  std::vector<int32_t> order(layout.num_states);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&model](int32_t a, int32_t b) {
    return model.num_gauss_in(a) > model.num_gauss_in(b);
  });
  layout.slot_state.assign(size_t(layout.num_slots()), -1);
  std::copy(order.begin(), order.end(), layout.slot_state.begin());

  layout.group_first_row.assign(layout.num_groups + 1, 0);
  int64_t total_rows = 0;
  for (int32_t g = 0; g < layout.num_groups; ++g) {
    total_rows += model.num_gauss_in(layout.slot_state[size_t(g) * kTensorGroupStates]);
    if (total_rows > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the model has too many Gaussians for the tensor-core kernel: ", model.num_gauss()));
    }
    layout.group_first_row[g + 1] = static_cast<int32_t>(total_rows);
  }

  const size_t row_floats = size_t(TensorRowWords(layout.chunks)) * 4;
  const size_t lo_at = size_t(layout.chunks) * kTensorLanes * 4;
  const size_t gconst_at = 2 * lo_at;
  layout.rows.assign(size_t(total_rows) * row_floats, 0.0f);
  for (size_t row = 0; row < size_t(total_rows); ++row) {
    std::fill_n(layout.rows.begin() + row * row_floats + gconst_at, kTensorGroupStates, kPadGconst);
  }
  std::vector<float> u(dim);
  std::vector<float> v(dim);
  for (int32_t g = 0; g < layout.num_groups; ++g) {
    for (int32_t slot = 0; slot < kTensorGroupStates; ++slot) {
      const int32_t state = layout.slot_state[size_t(g) * kTensorGroupStates + slot];
      if (state < 0) continue;
      const size_t tile = size_t(slot / 8);
      for (int32_t j = 0; j < model.num_gauss_in(state); ++j) {
        float* row = layout.rows.data() + (size_t(layout.group_first_row[g]) + j) * row_floats;
        row[gconst_at + slot] =
            ExpandGaussian(model, model.gauss_begin(state) + j, shift, u.data(), v.data());
        for (int32_t d = 0; d < dim; ++d) {
          // The pair of lane 4 (slot % 8) + d % 4 in its tile's half of chunk d / 4.
          const size_t pair =
              (size_t(d / 4) * 2 + tile) * kTensorLanes + size_t(slot % 8) * 4 + d % 4;
          const float hi_u = HighPart(u[d]);
          const float hi_v = HighPart(v[d]);
          row[2 * pair] = hi_u;
          row[2 * pair + 1] = hi_v;
          row[lo_at + 2 * pair] = u[d] - hi_u;
          row[lo_at + 2 * pair + 1] = v[d] - hi_v;
        }
      }
    }
  }
  return layout;
}

absl::StatusOr<TensorPackedModel> TensorPackedModel::Upload(const TensorModelLayout& layout) {
  TensorPackedModel packed;
  GMM_ASSIGN_OR_RETURN(packed.rows_, UploadToDevice(layout.rows));
  GMM_ASSIGN_OR_RETURN(packed.group_first_row_, UploadToDevice(layout.group_first_row));
  GMM_ASSIGN_OR_RETURN(packed.slot_state_, UploadToDevice(layout.slot_state));
  GMM_ASSIGN_OR_RETURN(packed.shift_, UploadToDevice(layout.shift));
  TensorModelView& view = packed.view_;
  view.rows = reinterpret_cast<const float4*>(packed.rows_.get());
  view.group_first_row = packed.group_first_row_.get();
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

#include "kernels/cuda/score/tensor_model_layout.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/score/cuda_packed_model.h"  // ExpandGaussian
#include "kernels/cuda/score/f16_split.h"
#include "kernels/cuda/score/tf32_split.h"

namespace gmmscore {
namespace {

constexpr int64_t kMaxGridY = 65535;  // groups are the grid's y dimension

template <typename T>
int64_t VectorBytes(const std::vector<T>& v) {
  return static_cast<int64_t>(v.size() * sizeof(T));
}

}  // namespace

int64_t TensorModelLayout::device_bytes() const {
  return VectorBytes(shift) + VectorBytes(group_first_row) + VectorBytes(slot_state) +
         VectorBytes(rows) + VectorBytes(rows_f16) + VectorBytes(column_scale);
}

bool TensorKernelSupports(int32_t dim, int32_t num_states) {
  const int64_t groups = (int64_t(num_states) + kTensorGroupStates - 1) / kTensorGroupStates;
  return dim >= 1 && (dim + 3) / 4 <= kTensorMaxChunks && groups <= kMaxGridY;
}

absl::StatusOr<TensorModelLayout> BuildTensorModelLayout(const GmmModel& model,
                                                         const std::vector<float>& shift,
                                                         TensorRowFormats formats) {
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

  // Each Gaussian's expanded form (u, v in log2 units, K), visited in row order: slot by slot of
  // each group, Gaussian j of a slot's state going to the group's row j.
  std::vector<float> u(dim);
  std::vector<float> v(dim);
  const auto for_each_gaussian = [&](auto&& visit) {
    for (int32_t g = 0; g < layout.num_groups; ++g) {
      for (int32_t slot = 0; slot < kTensorGroupStates; ++slot) {
        const int32_t state = layout.slot_state[size_t(g) * kTensorGroupStates + slot];
        if (state < 0) continue;
        for (int32_t j = 0; j < model.num_gauss_in(state); ++j) {
          const float k =
              ExpandGaussian(model, model.gauss_begin(state) + j, shift, u.data(), v.data());
          visit(size_t(layout.group_first_row[g]) + size_t(j), slot, k);
        }
      }
    }
  };
  // The word of lane 4 (slot % 8) + d % 4 in chunk d / 4 of its row.
  const auto lane_word = [](int32_t slot, int32_t d) {
    return size_t(d / 4) * kTensorLanes + size_t(slot % 8) * 4 + size_t(d % 4);
  };

  if (formats.tf32) {
    const size_t row_floats = size_t(TensorRowWords(layout.chunks)) * 4;
    const size_t lo_at = size_t(layout.chunks) * kTensorLanes * 4;
    const size_t gconst_at = 2 * lo_at;
    layout.rows.assign(size_t(total_rows) * row_floats, 0.0f);
    for (size_t row = 0; row < size_t(total_rows); ++row) {
      std::fill_n(layout.rows.begin() + row * row_floats + gconst_at, kTensorGroupStates,
                  kPadGconst);
    }
    for_each_gaussian([&](size_t row_index, int32_t slot, float k) {
      float* row = layout.rows.data() + row_index * row_floats;
      row[gconst_at + slot] = k;
      for (int32_t d = 0; d < dim; ++d) {
        // The pair of the lane's word in its tile's half of the chunk.
        const size_t pair = lane_word(slot, d) + size_t(d / 4 + slot / 8) * kTensorLanes;
        const float hi_u = Tf32HighPart(u[d]);
        const float hi_v = Tf32HighPart(v[d]);
        row[2 * pair] = hi_u;
        row[2 * pair + 1] = hi_v;
        row[lo_at + 2 * pair] = u[d] - hi_u;
        row[lo_at + 2 * pair + 1] = v[d] - hi_v;
      }
    });
  }

  if (formats.f16) {
    std::vector<float> largest(2 * size_t(dim), 0.0f);  // per column, u then v
    for_each_gaussian([&](size_t, int32_t, float) {
      for (int32_t d = 0; d < dim; ++d) {
        largest[d] = std::max(largest[d], std::abs(u[d]));
        largest[dim + d] = std::max(largest[dim + d], std::abs(v[d]));
      }
    });
    std::vector<float> parameter_scale(largest.size());
    layout.column_scale.resize(largest.size());
    for (size_t i = 0; i < largest.size(); ++i) {
      parameter_scale[i] = F16ColumnScale(largest[i]);
      layout.column_scale[i] = 1.0f / parameter_scale[i];  // a power of two: exact
    }
    const size_t row_words = size_t(TensorF16RowWords(layout.chunks)) * 4;
    const size_t gconst_at = size_t(TensorF16RowWords(layout.chunks) - kTensorGroupStates / 4) * 4;
    layout.rows_f16.assign(size_t(total_rows) * row_words, 0u);
    for (size_t row = 0; row < size_t(total_rows); ++row) {
      std::fill_n(layout.rows_f16.begin() + row * row_words + gconst_at, kTensorGroupStates,
                  std::bit_cast<uint32_t>(kPadGconst));
    }
    for_each_gaussian([&](size_t row_index, int32_t slot, float k) {
      uint32_t* row = layout.rows_f16.data() + row_index * row_words;
      row[gconst_at + slot] = std::bit_cast<uint32_t>(k);
      for (int32_t d = 0; d < dim; ++d) {
        const auto [hi, lo] =
            SplitF16Pair(u[d] * parameter_scale[d], v[d] * parameter_scale[dim + d]);
        const int32_t pair = d / 8;
        uint32_t* word =
            row + 4 * ((size_t(2 * pair + slot / 8) * kTensorLanes) + size_t(slot % 8) * 4 + d % 4);
        word[(d / 4) % 2] = hi;
        word[2 + (d / 4) % 2] = lo;
      }
    });
  }
  return layout;
}

absl::StatusOr<TensorPackedModel> TensorPackedModel::Upload(const TensorModelLayout& layout) {
  TensorPackedModel packed;
  GMM_ASSIGN_OR_RETURN(packed.rows_, UploadToDevice(layout.rows));
  GMM_ASSIGN_OR_RETURN(packed.rows_f16_, UploadToDevice(layout.rows_f16));
  GMM_ASSIGN_OR_RETURN(packed.column_scale_, UploadToDevice(layout.column_scale));
  GMM_ASSIGN_OR_RETURN(packed.group_first_row_, UploadToDevice(layout.group_first_row));
  GMM_ASSIGN_OR_RETURN(packed.slot_state_, UploadToDevice(layout.slot_state));
  GMM_ASSIGN_OR_RETURN(packed.shift_, UploadToDevice(layout.shift));
  TensorModelView& view = packed.view_;
  view.rows = reinterpret_cast<const float4*>(packed.rows_.get());
  view.rows_f16 = reinterpret_cast<const uint4*>(packed.rows_f16_.get());
  view.column_scale = packed.column_scale_.get();
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

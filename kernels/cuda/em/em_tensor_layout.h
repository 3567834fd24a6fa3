// Which Gaussians of a GMM the tensor-core E-step (em_tensor_kernel.h) takes, and their
// parameters in its layout.
//
// The expanded form and the sums of x'^2 lose accuracy with the distance of a Gaussian's mean from
// the shift in its own standard deviations: float32 rounding relative to sum_d (mu_d - s_d)^2 /
// var_d. Each block of up to kEmTensorBlockGauss Gaussians is shifted by the mean of its
// Gaussians' means, and no Gaussian is further than kEmTensorMaxOffset from its block's shift (by
// that sum): the bound keeps log-likelihoods within about 2e-4 nats and variances within about
// 1e-4 relative of float64. The Gaussians are sorted along the dimension whose means spread most
// and taken in that order into blocks, a block closing early where the next Gaussian would break
// the bound; blocks of fewer than kEmTensorMinBlockGauss (mostly padding) go to the exact kernels
// (em_stats_kernel.h), which centre every Gaussian's sums on its own mean.
#pragma once

#include <cstdint>
#include <vector>

#include "model/gmm_model.h"

namespace gmmscore {

inline constexpr double kEmTensorMaxOffset = 1024.0;
inline constexpr int32_t kEmTensorMinBlockGauss = 16;

struct EmTensorLayout {
  int32_t dim = 0;
  int32_t num_gauss = 0;  // slots, padded to a multiple of kEmTensorBlockGauss
  // The pdf's Gaussian (its index within the pdf) in each slot; -1 for padding.
  std::vector<int32_t> slot_gauss;
  std::vector<uint32_t> params;           // EmTensorModelView::params, 4 words a uint4
  std::vector<float> consts;              // EmTensorModelView::consts, 2 a float2
  std::vector<float> shift;               // [block][dim]
  std::vector<float> column_scale;        // EmTensorModelView::column_scale, [block][2][dim]
  std::vector<uint32_t> log_sum_records;  // EmTensorModelView::log_sum_records, 4 words a uint4
  // The pdf's Gaussians left to the exact kernels, in the pdf's order.
  std::vector<int32_t> exact;
};

// The layout of pdf's Gaussians; with tensor false (or a dimension past the tensor kernel's) every
// Gaussian goes to `exact`.
EmTensorLayout BuildEmTensorLayout(const GmmModel& model, int32_t pdf, bool tensor);

}  // namespace gmmscore

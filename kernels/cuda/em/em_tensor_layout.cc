#include "kernels/cuda/em/em_tensor_layout.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>
#include <utility>

#include "kernels/cuda/em/em_tensor_kernel.h"
#include "kernels/cuda/score/f16_split.h"

namespace gmmscore {
namespace {

// The dimension along which the Gaussians' means spread most.
int32_t WidestDimension(const GmmModel& model, uint32_t begin, const std::vector<int32_t>& gauss) {
  int32_t widest = 0;
  double widest_var = -1.0;
  for (int32_t d = 0; d < model.dim(); ++d) {
    double sum = 0.0, sum_sq = 0.0;
    for (const int32_t g : gauss) {
      const double m = model.mean(begin + uint32_t(g))[d];
      sum += m;
      sum_sq += m * m;
    }
    const double n = double(gauss.size());
    const double var = sum_sq / n - (sum / n) * (sum / n);
    if (var > widest_var) widest_var = var, widest = d;
  }
  return widest;
}

// The mean of the members' means, rounded to float: the kernels subtract it in float, and the
// parameters are about exactly that shift.
std::vector<double> MeanOfMeans(const GmmModel& model, uint32_t begin,
                                const std::vector<int32_t>& members) {
  const size_t dim = size_t(model.dim());
  std::vector<double> shift(dim, 0.0);
  for (const int32_t g : members) {
    for (size_t d = 0; d < dim; ++d) shift[d] += model.mean(begin + uint32_t(g))[d];
  }
  for (double& x : shift) x = double(static_cast<float>(x / double(members.size())));
  return shift;
}

double Offset(const GmmModel& model, uint32_t gauss, const double* shift) {
  double offset = 0.0;
  for (int32_t d = 0; d < model.dim(); ++d) {
    const double m = model.mean(gauss)[d] - shift[d];
    offset += m * m / model.variance(gauss)[d];
  }
  return offset;
}

bool AllWithin(const GmmModel& model, uint32_t begin, const std::vector<int32_t>& members,
               const std::vector<double>& shift) {
  for (const int32_t g : members) {
    if (Offset(model, begin + uint32_t(g), shift.data()) > kEmTensorMaxOffset) return false;
  }
  return true;
}

}  // namespace

EmTensorLayout BuildEmTensorLayout(const GmmModel& model, int32_t pdf, bool tensor) {
  EmTensorLayout layout;
  layout.dim = model.dim();
  const uint32_t begin = model.gauss_begin(pdf);
  const int32_t count = int32_t(model.num_gauss_in(pdf));
  const int32_t chunks = (model.dim() + 3) / 4;
  std::vector<int32_t> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), 0);
  if (!tensor || chunks > kEmTensorMaxChunks || count == 0) {
    layout.exact = std::move(order);
    return layout;
  }
  const int32_t widest = WidestDimension(model, begin, order);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return model.mean(begin + uint32_t(a))[widest] < model.mean(begin + uint32_t(b))[widest];
  });
  // Blocks in that order, each closed where the next Gaussian would put a member (itself or one
  // before) too far from the block's shift.
  std::vector<std::vector<int32_t>> formed(1);
  for (const int32_t g : order) {
    std::vector<int32_t> trial = formed.back();
    trial.push_back(g);
    if (trial.size() > size_t(kEmTensorBlockGauss) ||
        !AllWithin(model, begin, trial, MeanOfMeans(model, begin, trial))) {
      formed.push_back({g});
    } else {
      formed.back() = std::move(trial);
    }
  }
  // Blocks too sparse to pay for their padding go to the exact kernels.
  std::vector<std::vector<int32_t>> kept;
  for (std::vector<int32_t>& block : formed) {
    if (block.size() >= size_t(kEmTensorMinBlockGauss)) {
      kept.push_back(std::move(block));
    } else {
      layout.exact.insert(layout.exact.end(), block.begin(), block.end());
    }
  }
  std::sort(layout.exact.begin(), layout.exact.end());
  if (kept.empty()) return layout;
  const size_t dim = size_t(model.dim());
  const size_t slots = kept.size() * kEmTensorBlockGauss;
  layout.num_gauss = int32_t(slots);
  layout.slot_gauss.assign(slots, -1);
  std::vector<double> shift;
  for (size_t b = 0; b < kept.size(); ++b) {
    std::copy(kept[b].begin(), kept[b].end(), layout.slot_gauss.begin() + b * kEmTensorBlockGauss);
    const std::vector<double> block_shift = MeanOfMeans(model, begin, kept[b]);
    shift.insert(shift.end(), block_shift.begin(), block_shift.end());
  }
  layout.shift.assign(shift.begin(), shift.end());
  // u, v of each slot and dimension (zero for padding), then the fragments.
  const size_t dim_pad = size_t(4 * chunks);
  std::vector<float> u(slots * dim_pad, 0.0f), v(slots * dim_pad, 0.0f);
  layout.consts.assign(2 * slots, 0.0f);
  const double log_2pi = std::log(2.0 * std::numbers::pi);
  const double log2e = std::numbers::log2e;  // the kernels' log-likelihoods are in log2 units
  for (size_t slot = 0; slot < slots; ++slot) {
    if (layout.slot_gauss[slot] < 0) {
      layout.consts[2 * slot] = kEmTensorPadConst;
      continue;
    }
    const uint32_t g = begin + uint32_t(layout.slot_gauss[slot]);
    const double* s = &shift[(slot / kEmTensorBlockGauss) * dim];
    double k = model.log_weight(g) - 0.5 * double(dim) * log_2pi;
    for (size_t d = 0; d < dim; ++d) {
      const double var = model.variance(g)[d];
      const double m = model.mean(g)[d] - s[d];
      u[slot * dim_pad + d] = static_cast<float>(log2e * m / var);
      v[slot * dim_pad + d] = static_cast<float>(-0.5 * log2e / var);
      k -= 0.5 * (std::log(var) + m * m / var);
    }
    k *= log2e;
    const float hi = static_cast<float>(k);
    layout.consts[2 * slot] = hi;
    layout.consts[2 * slot + 1] = static_cast<float>(k - double(hi));
  }
  // Each block's column scales: its largest |u| (then |v|) of each dimension to [2^13, 2^14).
  const size_t blocks = slots / kEmTensorBlockGauss;
  const size_t pairs = size_t(EmTensorPairs(chunks));
  std::vector<float> param_scale(blocks * 2 * dim_pad, 1.0f);
  layout.column_scale.assign(blocks * 2 * dim, 0.0f);
  for (size_t b = 0; b < blocks; ++b) {
    for (size_t d = 0; d < dim; ++d) {
      float largest_u = 0.0f, largest_v = 0.0f;
      for (size_t slot = b * kEmTensorBlockGauss; slot < (b + 1) * kEmTensorBlockGauss; ++slot) {
        largest_u = std::max(largest_u, std::abs(u[slot * dim_pad + d]));
        largest_v = std::max(largest_v, std::abs(v[slot * dim_pad + d]));
      }
      param_scale[(2 * b) * dim_pad + d] = F16ColumnScale(largest_u);
      param_scale[(2 * b + 1) * dim_pad + d] = F16ColumnScale(largest_v);
      // Powers of two: exact reciprocals.
      layout.column_scale[(2 * b) * dim + d] = 1.0f / param_scale[(2 * b) * dim_pad + d];
      layout.column_scale[(2 * b + 1) * dim + d] = 1.0f / param_scale[(2 * b + 1) * dim_pad + d];
    }
  }
  // Slot's {u, v} of dimension d (zero past the dimensions), scaled and split: {hi, lo}.
  const auto split = [&](size_t slot, size_t d) -> std::pair<uint32_t, uint32_t> {
    if (d >= dim) return {0u, 0u};
    const size_t b = slot / kEmTensorBlockGauss;
    return SplitF16Pair(u[slot * dim_pad + d] * param_scale[(2 * b) * dim_pad + d],
                        v[slot * dim_pad + d] * param_scale[(2 * b + 1) * dim_pad + d]);
  };
  const size_t warp_tiles = slots / kEmTensorWarpGauss;
  layout.params.assign(warp_tiles * pairs * 2 * 32 * 4, 0u);
  for (size_t wt = 0; wt < warp_tiles; ++wt) {
    for (size_t p = 0; p < pairs; ++p) {
      for (size_t lane = 0; lane < 32; ++lane) {
        const size_t s = lane / 4, t = lane % 4;
        const size_t g0 = wt * kEmTensorWarpGauss + s, g1 = g0 + 8;
        // a0 .. a3: Gaussians s, s + 8 at dimension 4 (2p) + t, then at 4 (2p + 1) + t.
        const std::pair<uint32_t, uint32_t> a[4] = {split(g0, 8 * p + t), split(g1, 8 * p + t),
                                                    split(g0, 8 * p + 4 + t),
                                                    split(g1, 8 * p + 4 + t)};
        for (size_t i = 0; i < 4; ++i) {
          layout.params[(((wt * pairs + p) * 2 + 0) * 32 + lane) * 4 + i] = a[i].first;
          layout.params[(((wt * pairs + p) * 2 + 1) * 32 + lane) * 4 + i] = a[i].second;
        }
      }
    }
  }
  // The log-sums kernel's records: B fragments {b0 hi, b1 hi, b0 lo, b1 lo} of Gaussian 8n + s,
  // dimensions 4 (2p) + t and 4 (2p + 1) + t; the constants; the shift; the column scales.
  const size_t records = slots / kEmTensorRecordGauss;
  const size_t record = size_t(EmTensorLogSumRecordWords(chunks));
  const size_t record_pad = 8 * pairs;  // dimensions of a record's shift and scales
  layout.log_sum_records.assign(records * record * 4, 0u);
  for (size_t r = 0; r < records; ++r) {
    uint32_t* out = &layout.log_sum_records[r * record * 4];
    for (size_t n = 0; n < kEmTensorRecordGauss / 8; ++n) {
      for (size_t p = 0; p < pairs; ++p) {
        for (size_t lane = 0; lane < 32; ++lane) {
          const size_t g = r * kEmTensorRecordGauss + 8 * n + lane / 4, t = lane % 4;
          const auto [hi0, lo0] = split(g, 8 * p + t);
          const auto [hi1, lo1] = split(g, 8 * p + 4 + t);
          uint32_t* word = out + ((n * pairs + p) * 32 + lane) * 4;
          word[0] = hi0;
          word[1] = hi1;
          word[2] = lo0;
          word[3] = lo1;
        }
      }
    }
    float* tail = reinterpret_cast<float*>(out + (kEmTensorRecordGauss / 8) * pairs * 32 * 4);
    for (size_t k = 0; k < 2 * kEmTensorRecordGauss; ++k) {
      tail[k] = layout.consts[2 * r * kEmTensorRecordGauss + k];
    }
    const size_t block = r * kEmTensorRecordGauss / kEmTensorBlockGauss;
    float* shift_out = tail + 2 * kEmTensorRecordGauss;
    float* scale_out = shift_out + record_pad;
    for (size_t d = 0; d < dim; ++d) {
      shift_out[d] = float(shift[block * dim + d]);
      scale_out[d] = layout.column_scale[(2 * block) * dim + d];
      scale_out[record_pad + d] = layout.column_scale[(2 * block + 1) * dim + d];
    }
  }
  return layout;
}

}  // namespace gmmscore

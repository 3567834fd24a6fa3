#include "kernels/cuda/em_tensor_layout.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>

#include "kernels/cuda/em_tensor_kernel.h"
#include "kernels/cuda/tf32_split.h"

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
      u[slot * dim_pad + d] = static_cast<float>(m / var);
      v[slot * dim_pad + d] = static_cast<float>(-0.5 / var);
      k -= 0.5 * (std::log(var) + m * m / var);
    }
    const float hi = static_cast<float>(k);
    layout.consts[2 * slot] = hi;
    layout.consts[2 * slot + 1] = static_cast<float>(k - double(hi));
  }
  const size_t warp_tiles = slots / kEmTensorWarpGauss;
  layout.params.assign(warp_tiles * size_t(chunks) * 2 * 32 * 4, 0u);
  for (size_t wt = 0; wt < warp_tiles; ++wt) {
    for (size_t c = 0; c < size_t(chunks); ++c) {
      for (size_t lane = 0; lane < 32; ++lane) {
        const size_t s = lane / 4, t = lane % 4, d = 4 * c + t;
        const size_t g0 = wt * kEmTensorWarpGauss + s, g1 = g0 + 8;
        const float a[4] = {u[g0 * dim_pad + d], u[g1 * dim_pad + d], v[g0 * dim_pad + d],
                            v[g1 * dim_pad + d]};
        for (size_t i = 0; i < 4; ++i) {
          const float hi = Tf32HighPart(a[i]);
          layout.params[(((wt * chunks + c) * 2 + 0) * 32 + lane) * 4 + i] =
              std::bit_cast<uint32_t>(hi);
          layout.params[(((wt * chunks + c) * 2 + 1) * 32 + lane) * 4 + i] =
              std::bit_cast<uint32_t>(a[i] - hi);
        }
      }
    }
  }
  // The log-sums kernel's records: B fragments {u hi, v hi, u lo, v lo} of Gaussian 8n + s,
  // dimension 4c + t; the constants; the shift.
  const size_t records = slots / kEmTensorRecordGauss;
  const size_t record = size_t(EmTensorLogSumRecordWords(chunks));
  layout.log_sum_records.assign(records * record * 4, 0u);
  for (size_t r = 0; r < records; ++r) {
    uint32_t* out = &layout.log_sum_records[r * record * 4];
    for (size_t n = 0; n < kEmTensorRecordGauss / 8; ++n) {
      for (size_t c = 0; c < size_t(chunks); ++c) {
        for (size_t lane = 0; lane < 32; ++lane) {
          const size_t g = r * kEmTensorRecordGauss + 8 * n + lane / 4, d = 4 * c + lane % 4;
          const float uh = Tf32HighPart(u[g * dim_pad + d]), vh = Tf32HighPart(v[g * dim_pad + d]);
          uint32_t* word = out + ((n * chunks + c) * 32 + lane) * 4;
          word[0] = std::bit_cast<uint32_t>(uh);
          word[1] = std::bit_cast<uint32_t>(vh);
          word[2] = std::bit_cast<uint32_t>(u[g * dim_pad + d] - uh);
          word[3] = std::bit_cast<uint32_t>(v[g * dim_pad + d] - vh);
        }
      }
    }
    float* tail = reinterpret_cast<float*>(out + (kEmTensorRecordGauss / 8) * chunks * 32 * 4);
    for (size_t k = 0; k < 2 * kEmTensorRecordGauss; ++k) {
      tail[k] = layout.consts[2 * r * kEmTensorRecordGauss + k];
    }
    const size_t block = r * kEmTensorRecordGauss / kEmTensorBlockGauss;
    for (size_t d = 0; d < dim; ++d) {
      tail[2 * kEmTensorRecordGauss + d] = float(shift[block * dim + d]);
    }
  }
  return layout;
}

}  // namespace gmmscore

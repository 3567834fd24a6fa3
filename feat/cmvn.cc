#include "feat/cmvn.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace gmmscore {

// As Kaldi's AccCmvnStats: the products in float (the weight is a float there), the sums in
// double, so that the statistics are Kaldi's to the bit.
void CmvnStats::AddFrame(const float* frame, double weight) {
  const float w = static_cast<float>(weight);
  count += w;
  for (size_t d = 0; d < sum.size(); ++d) {
    const float x = frame[d];
    sum[d] += x * w;
    sum_sq[d] += x * x * w;
  }
}

void CmvnStats::AddFrames(const Matrix& feats) {
  for (int32_t t = 0; t < feats.rows; ++t) AddFrame(feats.row(t));
}

void CmvnStats::SubtractFrame(const float* frame) { AddFrame(frame, -1.0); }

void CmvnStats::Add(const CmvnStats& other) {
  count += other.count;
  for (size_t d = 0; d < sum.size(); ++d) {
    sum[d] += other.sum[d];
    sum_sq[d] += other.sum_sq[d];
  }
}

// As Kaldi's ApplyCmvn: the offset (and scale) computed in double and rounded to float, then
// applied in float, so that the features are Kaldi's to the bit.
std::vector<double> CmvnStats::KaldiRows() const {
  const size_t dim = sum.size();
  std::vector<double> rows(2 * (dim + 1), 0.0);
  std::copy(sum.begin(), sum.end(), rows.begin());
  rows[dim] = count;
  std::copy(sum_sq.begin(), sum_sq.end(), rows.begin() + static_cast<ptrdiff_t>(dim + 1));
  return rows;
}

absl::StatusOr<CmvnStats> CmvnStats::FromKaldiRows(int32_t rows, int32_t cols,
                                                   const std::vector<double>& data,
                                                   bool norm_vars) {
  if (rows < 1 || rows > 2 || cols < 1 || data.size() != size_t(rows) * size_t(cols)) {
    return absl::InvalidArgumentError(
        absl::StrCat("CMVN statistics are ", rows, " x ", cols, "; expected 2 x (dimension + 1)"));
  }
  if (rows == 1 && norm_vars) {
    return absl::InvalidArgumentError(
        "variance normalization was asked for, but the statistics have no variances");
  }
  const int32_t dim = cols - 1;
  CmvnStats stats(dim);
  stats.count = data[size_t(dim)];
  if (!(stats.count >= 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "insufficient statistics for cepstral mean and variance normalization: count = ",
        stats.count));
  }
  std::copy_n(data.begin(), dim, stats.sum.begin());
  if (rows == 2) std::copy_n(data.begin() + cols, dim, stats.sum_sq.begin());
  return stats;
}

absl::Status CmvnStats::SkipDims(const std::vector<int32_t>& dims) {
  for (const int32_t d : dims) {
    if (d < 0 || size_t(d) >= sum.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--skip-dims: dimension ", d, " is not below ", sum.size()));
    }
    sum[size_t(d)] = 0.0;
    sum_sq[size_t(d)] = count;
  }
  return absl::OkStatus();
}

void ApplyCmvnToFrame(const CmvnStats& stats, bool norm_vars, float* frame) {
  if (stats.count <= 0) return;
  const float minus_inverse_count = static_cast<float>(-1.0 / stats.count);
  for (size_t d = 0; d < stats.sum.size(); ++d) {
    if (!norm_vars) {
      frame[d] += static_cast<float>(minus_inverse_count * stats.sum[d]);
      continue;
    }
    const double mean = stats.sum[d] / stats.count;
    const double var = std::max(stats.sum_sq[d] / stats.count - mean * mean, 1e-20);
    const double scale = 1.0 / std::sqrt(var);
    frame[d] = frame[d] * static_cast<float>(scale) + static_cast<float>(-(mean * scale));
  }
}

void ApplyCmvn(const CmvnStats& stats, bool norm_vars, Matrix* feats) {
  for (int32_t t = 0; t < feats->rows; ++t) ApplyCmvnToFrame(stats, norm_vars, feats->row(t));
}

void ApplyCmvnReverse(const CmvnStats& stats, bool norm_vars, Matrix* feats) {
  if (stats.count <= 0) return;
  const size_t dim = stats.sum.size();
  std::vector<float> offset(dim), scale(dim, 1.0f);
  for (size_t d = 0; d < dim; ++d) {
    const double mean = stats.sum[d] / stats.count;
    offset[d] = static_cast<float>(mean);
    if (norm_vars) {
      const double var = std::max(stats.sum_sq[d] / stats.count - mean * mean, 1e-20);
      scale[d] = static_cast<float>(std::sqrt(var));
    }
  }
  for (int32_t t = 0; t < feats->rows; ++t) {
    float* frame = feats->row(t);
    for (size_t d = 0; d < dim; ++d) {
      if (norm_vars) frame[d] *= scale[d];
      frame[d] += offset[d];
    }
  }
}

void SlidingCmvn::Process(float* frame) {
  recent_.emplace_back(frame, frame + stats_.sum.size());
  stats_.AddFrame(frame);
  if (static_cast<int32_t>(recent_.size()) > window_) {
    stats_.SubtractFrame(recent_.front().data());
    recent_.pop_front();
  }
  ApplyCmvnToFrame(stats_, norm_vars_, frame);
}

}  // namespace gmmscore

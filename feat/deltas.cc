#include "feat/deltas.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace gmmscore {

absl::Status DeltaOptions::Validate() const {
  if (order < 0 || order > 10 || window < 1 || window > 100) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad --delta-order ", order, " or --delta-window ", window, " (order 0-10, window 1-100)"));
  }
  return absl::OkStatus();
}

DeltaComputer::DeltaComputer(const DeltaOptions& opts) : opts_(opts) {
  // As Kaldi's DeltaFeatures: each order's window is the previous one convolved with j, summed
  // in float, then scaled by the float 1 / sum(j^2).
  scales_.push_back({1.0f});
  float normalizer = 0;
  for (int32_t j = -opts.window; j <= opts.window; ++j) normalizer += static_cast<float>(j * j);
  const float inverse = static_cast<float>(1.0 / normalizer);
  for (int32_t i = 1; i <= opts.order; ++i) {
    const std::vector<float> prev = scales_.back();
    const int32_t prev_half = static_cast<int32_t>(prev.size() - 1) / 2;
    const int32_t half = prev_half + opts.window;
    std::vector<float> cur(2 * half + 1, 0.0f);
    for (int32_t j = -opts.window; j <= opts.window; ++j) {
      for (int32_t k = -prev_half; k <= prev_half; ++k) {
        cur[j + k + half] += static_cast<float>(j) * prev[k + prev_half];
      }
    }
    for (float& w : cur) w *= inverse;
    scales_.push_back(std::move(cur));
  }
}

Matrix ComputeDeltas(const DeltaOptions& opts, const Matrix& feats) {
  const DeltaComputer computer(opts);
  Matrix out(feats.rows, feats.cols * (opts.order + 1));
  for (int32_t t = 0; t < feats.rows; ++t) {
    computer.ComputeFrame([&](int64_t r) { return feats.row(static_cast<int32_t>(r)); }, feats.cols,
                          feats.rows, t, out.row(t));
  }
  return out;
}

}  // namespace gmmscore

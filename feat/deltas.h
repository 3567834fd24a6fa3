// Delta and acceleration features as Kaldi's add-deltas computes them (feat/feature-functions.h,
// DeltaFeatures): order-i coefficients are the order-(i-1) ones convolved with the regression
// window j / sum(j^2), j in [-window, window]; frames past either end repeat the end frame.
// Output frame t needs input frames up to t + order * window: the look-ahead a stream pays.
// The arithmetic is Kaldi's, in float (its scales, and a multiply and an add per term in window
// order), so that the features are add-deltas' to the bit.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "util/matrix.h"

namespace gmmscore {

struct DeltaOptions {
  int32_t order = 2;
  int32_t window = 2;
  absl::Status Validate() const;
  int32_t lookahead() const { return order * window; }
};

class DeltaComputer {
 public:
  explicit DeltaComputer(const DeltaOptions& opts);
  const DeltaOptions& options() const { return opts_; }
  // Output frame t ((order + 1) * dim values) from the input's frames, clamped to [0, rows).
  // input(i) returns row i's pointer.
  template <typename RowFn>
  void ComputeFrame(RowFn input, int32_t dim, int64_t rows, int64_t t, float* out) const {
    for (int32_t i = 0; i <= opts_.order; ++i) {
      const std::vector<float>& s = scales_[i];
      const int64_t half = static_cast<int64_t>(s.size() - 1) / 2;
      float* acc = out + i * dim;
      std::fill_n(acc, dim, 0.0f);
      for (int64_t j = -half; j <= half; ++j) {
        const float w = s[j + half];
        if (w == 0) continue;
        const float* row = input(std::clamp<int64_t>(t + j, 0, rows - 1));
        for (int32_t d = 0; d < dim; ++d) acc[d] += w * row[d];
      }
    }
  }

 private:
  DeltaOptions opts_;
  std::vector<std::vector<float>> scales_;  // per order, 2 * order * window + 1 weights
};

// add-deltas on a whole utterance.
Matrix ComputeDeltas(const DeltaOptions& opts, const Matrix& feats);

}  // namespace gmmscore

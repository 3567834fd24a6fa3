// Fusion of a stream's per-model scores window by window, with the same numbers as fusing the
// whole utterance at once (kernels/fusion.h): the select rule's running sums over the last N
// frames carry over from one window to the next.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "kernels/fusion.h"
#include "kernels/util/matrix.h"

namespace gmmscore::server {

class StreamFusion {
 public:
  StreamFusion(FusionSpec spec, size_t num_models);

  // Fuses one window (frames x states per model, all the same shape) into out. With one
  // model, out is that model's scores.
  absl::Status Fuse(std::vector<Matrix>& scores, Matrix* out);

 private:
  void SelectBest(const std::vector<Matrix>& scores, Matrix* out);

  const FusionSpec spec_;
  // kSelectBest: per model, the best-state score of the last select_window frames (a ring, at
  // frames_seen_ % select_window) and their sum.
  std::vector<std::vector<double>> recent_best_;
  std::vector<double> window_sum_;
  int64_t frames_seen_ = 0;
};

}  // namespace gmmscore::server

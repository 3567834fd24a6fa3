// Fusion of a stream's per-model scores window by window, with the same numbers as fusing the
// whole utterance at once (kernels/fusion.h): the select rule's running sums over the last N
// frames carry over from one window to the next.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "model/fusion.h"
#include "util/matrix.h"

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
  std::optional<SelectTracker> select_;  // kSelectBest: carried from window to window
  std::vector<float> frame_best_;
};

}  // namespace gmmscore::server

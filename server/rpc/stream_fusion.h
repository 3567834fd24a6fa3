// Fusion of a stream's per-model scores window by window, with the same numbers as fusing the
// whole utterance at once (kernels/fusion.h): the select rule's running sums over the last N
// frames carry over from one window to the next.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "model/fusion.h"
#include "util/matrix.h"

namespace gmmscore::server {

class StreamFusion {
 public:
  StreamFusion(FusionSpec spec, size_t num_models);

  // Fuses one window (frames x states per model, all the same shape). With one model that
  // model's rows come back as they are (no copy); else the fused rows, written to *scratch.
  absl::StatusOr<MatrixView> Fuse(std::span<const MatrixView> scores, Matrix* scratch);

 private:
  void SelectBest(std::span<const MatrixView> scores, Matrix* out);

  const FusionSpec spec_;
  std::optional<SelectTracker> select_;  // kSelectBest: carried from window to window
  std::vector<float> frame_best_;
};

}  // namespace gmmscore::server

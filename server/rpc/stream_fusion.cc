#include "server/rpc/stream_fusion.h"

#include <algorithm>

namespace gmmscore::server {

StreamFusion::StreamFusion(FusionSpec spec, size_t num_models) : spec_(std::move(spec)) {
  if (spec_.rule == FusionRule::kSelectBest) {
    select_.emplace(spec_.select_window, num_models);
    frame_best_.resize(num_models);
  }
}

absl::Status StreamFusion::Fuse(std::vector<Matrix>& scores, Matrix* out) {
  if (scores.size() == 1) {
    *out = std::move(scores[0]);
    return absl::OkStatus();
  }
  if (spec_.rule != FusionRule::kSelectBest) {
    std::vector<const Matrix*> parts;
    for (const Matrix& m : scores) parts.push_back(&m);
    return FuseScores(spec_, parts, out);
  }
  SelectBest(scores, out);
  return absl::OkStatus();
}

// SelectTracker carries the running sums across windows: the same choices as fusing the whole
// utterance at once.
void StreamFusion::SelectBest(const std::vector<Matrix>& scores, Matrix* out) {
  const int32_t frames = scores[0].rows, states = scores[0].cols;
  out->Resize(frames, states);
  for (int32_t t = 0; t < frames; ++t) {
    for (size_t k = 0; k < scores.size(); ++k) {
      const float* row = scores[k].row(t);
      frame_best_[k] = *std::max_element(row, row + states);
    }
    std::copy_n(scores[select_->Next(frame_best_)].row(t), states, out->row(t));
  }
}

}  // namespace gmmscore::server

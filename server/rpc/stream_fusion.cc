#include "server/rpc/stream_fusion.h"

#include <algorithm>

namespace gmmscore::server {

StreamFusion::StreamFusion(FusionSpec spec, size_t num_models) : spec_(std::move(spec)) {
  if (spec_.rule == FusionRule::kSelectBest) {
    select_.emplace(spec_.select_window, num_models);
    frame_best_.resize(num_models);
  }
}

absl::StatusOr<MatrixView> StreamFusion::Fuse(std::span<const MatrixView> scores, Matrix* scratch) {
  if (scores.size() == 1) return scores[0];
  if (spec_.rule != FusionRule::kSelectBest) {
    // A backend that leaves these rules to the stream (none of ours does) pays for copies.
    std::vector<Matrix> copies;
    std::vector<const Matrix*> parts;
    for (const MatrixView& v : scores) copies.push_back(v.Copy());
    for (const Matrix& m : copies) parts.push_back(&m);
    if (absl::Status s = FuseScores(spec_, parts, scratch); !s.ok()) return s;
    return MatrixView(*scratch);
  }
  SelectBest(scores, scratch);
  return MatrixView(*scratch);
}

// SelectTracker carries the running sums across windows: the same choices as fusing the whole
// utterance at once.
void StreamFusion::SelectBest(std::span<const MatrixView> scores, Matrix* out) {
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

#include "server/stream_fusion.h"

#include <algorithm>

namespace gmmscore::server {

StreamFusion::StreamFusion(FusionSpec spec, size_t num_models) : spec_(std::move(spec)) {
  if (spec_.rule == FusionRule::kSelectBest) {
    recent_best_.assign(num_models, std::vector<double>(size_t(spec_.select_window), 0.0));
    window_sum_.assign(num_models, 0.0);
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

// The arithmetic of kernels/fusion.cc's SelectBest (add the new frame, subtract the one that
// left the window, in double), continued across windows.
void StreamFusion::SelectBest(const std::vector<Matrix>& scores, Matrix* out) {
  const int32_t frames = scores[0].rows, states = scores[0].cols;
  const size_t window = size_t(spec_.select_window);
  out->Resize(frames, states);
  for (int32_t t = 0; t < frames; ++t, ++frames_seen_) {
    const size_t slot = size_t(frames_seen_) % window;
    size_t best = 0;
    for (size_t k = 0; k < scores.size(); ++k) {
      const float* row = scores[k].row(t);
      const double frame_best = *std::max_element(row, row + states);
      window_sum_[k] += frame_best;
      if (frames_seen_ >= spec_.select_window) window_sum_[k] -= recent_best_[k][slot];
      recent_best_[k][slot] = frame_best;
      if (window_sum_[k] > window_sum_[best]) best = k;
    }
    std::copy_n(scores[best].row(t), states, out->row(t));
  }
}

}  // namespace gmmscore::server

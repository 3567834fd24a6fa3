// What the batcher moves around: the model set a stream scores against, the windows of frames
// streams submit, and a batch (windows of many streams of one model set, scored in one launch).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/fusion.h"
#include "server/model_registry.h"
#include "util/matrix.h"

namespace gmmscore::server {

using Clock = std::chrono::steady_clock;

// The models a stream scores against (fused when more than one). Streams whose sets have the
// same key (names and versions) share a queue.
struct ModelSet {
  std::vector<std::shared_ptr<ModelEntry>> models;
  std::string key;  // "name@version+name@version..."
  static std::shared_ptr<const ModelSet> Make(std::vector<std::shared_ptr<ModelEntry>> models);
};

class WindowSink;

struct Window {
  std::shared_ptr<WindowSink> sink;
  int64_t first_frame = 0;
  Matrix feats;  // frames x dim
  // The stream's fusion of its set's models. A backend may fuse max, log-linear and log-add
  // where it scores; select is the stream's (its running sums go from window to window).
  std::shared_ptr<const FusionSpec> fusion;
  Clock::time_point ready;  // when the window was cut (its last frame had been read)
  Clock::time_point queued;
};

// Receives scored windows, one call per window, on a delivery thread. Windows of a stream may
// arrive out of order (batches in flight together, on several devices): the sink puts them back
// in order. scores holds the window's fused scores (frames x states) where the backend fused
// them (or the set has one model), else one matrix per model of the set.
class WindowSink {
 public:
  virtual ~WindowSink() = default;
  virtual void OnWindowScored(Window window, absl::StatusOr<std::vector<Matrix>> scores) = 0;
};

struct Batch {
  std::shared_ptr<const ModelSet> models;
  std::vector<Window> windows;
  int64_t frames = 0;
};

// Whether a backend that fuses where it scores fuses this window there (or leaves the fusion to
// the stream: the select rule).
inline bool FusedByBackend(const ModelSet& set, const Window& window) {
  return set.models.size() == 1 ||
         (window.fusion != nullptr && window.fusion->rule != FusionRule::kSelectBest);
}

}  // namespace gmmscore::server

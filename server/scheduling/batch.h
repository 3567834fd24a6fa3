// What the batcher moves around: the model set a stream scores against, the windows of frames
// streams submit, and a batch (windows of many streams of one model set, scored in one launch).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "kernels/compute_device.h"
#include "model/fusion.h"
#include "server/clock.h"
#include "server/model_entry.h"
#include "util/matrix.h"
#include "util/shared_bytes.h"

namespace gmmscore::server {

// The models a stream scores against (fused when more than one). Streams whose sets have the
// same key (names and versions) share a queue.
struct ModelSet {
  std::vector<std::shared_ptr<ModelEntry>> models;
  std::string key;  // "name@version+name@version..."
  static std::shared_ptr<const ModelSet> Make(std::vector<std::shared_ptr<ModelEntry>> models);
};

class WindowSink;

// A window's rows as the device encoded them: frames x states little-endian 16-bit values, ready
// to be a response's scores (BatchSlot::encoded16: in the buffer the slot lent, or copied out of
// it), or each frame's BEAM_SPARSE candidates, copied out of the batch's buffers
// (BatchSlot::beam_candidates); and each frame's best state and score.
struct EncodedRows {
  SharedBytes values;                // 16-bit rows; empty: none
  std::vector<int32_t> beam_counts;  // per frame; empty: no candidates
  std::vector<float> beam_scores;    // the frames' candidates, frame after frame, in state order
  std::vector<int32_t> beam_states;
  std::vector<int32_t> best_states;
  std::vector<float> best_scores;
  // Not encoded on the device: the window comes with its float rows.
  bool empty() const { return values.empty() && beam_counts.empty(); }
};

struct Window {
  std::shared_ptr<WindowSink> sink;
  int64_t first_frame = 0;
  Matrix feats;  // frames x dim
  // The stream's fusion of its set's models. A backend may fuse max, log-linear and log-add
  // where it scores; select is the stream's (its running sums go from window to window).
  std::shared_ptr<const FusionSpec> fusion;
  Clock::time_point ready;  // when the window was cut (its last frame had been read)
  Clock::time_point queued;
  // The encoding the stream sends, for a device that encodes where it scores (with its beam for
  // kBeamSparse); and, on delivery, what the device made.
  DeviceScoreEncoding encoding = DeviceScoreEncoding::kNone;
  float beam = 0.0f;
  EncodedRows encoded;
};

// A scored window's rows (frames x states) where its batch left them: the fused scores where the
// backend fused them (or the set has one model), else one view per model of the set.
using WindowScores = absl::InlinedVector<MatrixView, 2>;

// Receives scored windows, one call per window, on a delivery thread. A window the device encoded
// (Window::encoded) comes with no float rows; the others with their rows, valid only during the
// call (a sink copies what it keeps).
// Windows of a stream may arrive out of order (batches in flight together, on several devices): the
// sink puts them back in order.
class WindowSink {
 public:
  virtual ~WindowSink() = default;
  virtual void OnWindowScored(Window window, absl::StatusOr<WindowScores> scores) = 0;
};

// Owned copies of a window's rows, for a sink that keeps them past the call.
std::vector<Matrix> CopyScores(const WindowScores& scores);
// Views of owned rows.
WindowScores ViewScores(const std::vector<Matrix>& scores);

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

// The frames of one stream read but not yet in a window, and the cutting of windows from them:
// frames arrive in chunks of any size; a window takes the oldest W (or fewer, at the latency
// deadline or the end), and is ready from the moment the chunk holding its last frame was read.
// Not thread-safe: the stream's session holds its lock around every call.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "util/matrix.h"

namespace gmmscore::server {

class WindowCutter {
 public:
  using Clock = std::chrono::steady_clock;

  explicit WindowCutter(int32_t dim) : dim_(dim) {}

  int32_t dim() const { return dim_; }
  // The index the next chunk must start at: frames appended so far.
  int64_t next_frame() const { return next_frame_; }
  int32_t pending_frames() const { return pending_frames_; }
  int64_t pending_bytes() const { return int64_t(pending_frames_) * dim_ * int64_t(sizeof(float)); }
  // When the chunk holding the oldest pending frame was read (pending_frames() > 0).
  Clock::time_point oldest_arrival() const { return arrivals_.front().second; }

  // Appends the little-endian float32 frames of `data` (whole frames of dim values), read at
  // `now`. InvalidArgument naming the frame and dimension of the first value that is not finite;
  // nothing is appended then.
  absl::Status Append(std::string_view data, Clock::time_point now);

  struct Cut {
    int64_t first_frame = 0;
    Matrix feats;  // frames x dim
    Clock::time_point ready;
  };
  // The next window: the oldest `frames` pending frames (1 <= frames <= pending_frames()).
  Cut CutWindow(int32_t frames);
  // Drops every pending frame (a failed stream); next_frame() stays.
  void Clear();

 private:
  const int32_t dim_;
  // Frames read but not yet in a window: pending_frames_ rows from row offset_ of pending_.
  std::vector<float> pending_;
  int32_t offset_ = 0;
  int32_t pending_frames_ = 0;
  int64_t next_frame_ = 0;
  int64_t window_start_ = 0;  // index of the first pending frame
  // Per chunk still (partly) pending: its end frame and when it was read.
  std::deque<std::pair<int64_t, Clock::time_point>> arrivals_;
};

}  // namespace gmmscore::server

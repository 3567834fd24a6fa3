#include "server/rpc/window_cutter.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "model/shape_checks.h"
#include "proto/wire_codec.h"

namespace gmmscore::server {

absl::Status WindowCutter::Append(std::string_view data, Clock::time_point now) {
  const size_t frame_bytes = size_t(dim_) * sizeof(float);
  const int64_t frames = int64_t(data.size() / frame_bytes);
  if (frames == 0) return absl::OkStatus();
  if (offset_ > 0) {  // compact: the rows before the offset are in windows already
    pending_.erase(pending_.begin(), pending_.begin() + ptrdiff_t(offset_) * dim_);
    offset_ = 0;
  }
  const size_t at = pending_.size();
  pending_.resize(at + size_t(frames) * dim_);
  float* values = pending_.data() + at;
  wire::ReadFloat32(data.substr(0, size_t(frames) * frame_bytes), {values, size_t(frames) * dim_});
  for (int64_t i = 0; i < frames * dim_; ++i) {
    if (!FeatureInRange(values[i])) {
      const float bad = values[i];
      pending_.resize(at);
      return absl::InvalidArgumentError(absl::StrCat("frame ", next_frame_ + i / dim_,
                                                     ", dimension ", i % dim_, ": ",
                                                     FeatureRangeProblem(bad)));
    }
  }
  pending_frames_ += int32_t(frames);
  next_frame_ += frames;
  arrivals_.emplace_back(next_frame_, now);
  return absl::OkStatus();
}

WindowCutter::Cut WindowCutter::CutWindow(int32_t frames) {
  Cut cut;
  cut.first_frame = window_start_;
  cut.feats.Resize(frames, dim_);
  std::memcpy(cut.feats.data.data(), pending_.data() + size_t(offset_) * dim_,
              size_t(frames) * dim_ * sizeof(float));
  const int64_t end = window_start_ + frames;
  // The window is ready since the chunk holding its last frame was read.
  for (const auto& [chunk_end, read_at] : arrivals_) {
    if (chunk_end >= end) {
      cut.ready = read_at;
      break;
    }
  }
  while (!arrivals_.empty() && arrivals_.front().first <= end) arrivals_.pop_front();
  window_start_ = end;
  offset_ += frames;
  pending_frames_ -= frames;
  if (pending_frames_ == 0) {
    pending_.clear();
    offset_ = 0;
  }
  return cut;
}

void WindowCutter::Clear() {
  pending_.clear();
  pending_frames_ = offset_ = 0;
  window_start_ = next_frame_;
  arrivals_.clear();
}

}  // namespace gmmscore::server

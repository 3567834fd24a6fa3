#include "server/kept_frames.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace gmmscore::server {

// One stream_id's frames: a ring of capacity frames, grown as frames arrive, written at `next`
// once full. Its own mutex: a stream appends while AdaptModel may copy.
struct KeptFrames::Writer::Entry {
  Entry(int32_t d, int32_t c, int64_t b) : dim(d), capacity(c), bytes(b) {}
  const int32_t dim;
  const int32_t capacity;
  const int64_t bytes;  // reserved
  std::mutex mu;
  std::vector<float> frames;
  int32_t next = 0;  // the oldest frame's index once the ring is full
  bool live = true;
  Clock::time_point ended{};
};

KeptFrames::Writer::~Writer() {
  std::lock_guard<std::mutex> lock(entry_->mu);
  entry_->live = false;
  entry_->ended = Clock::now();
}

void KeptFrames::Writer::Append(std::string_view frames) {
  Entry& e = *entry_;
  const size_t frame_bytes = size_t(e.dim) * sizeof(float);
  int64_t count = int64_t(frames.size() / frame_bytes);
  // Only the last capacity frames of this chunk can stay.
  if (count > e.capacity) {
    frames.remove_prefix(size_t(count - e.capacity) * frame_bytes);
    count = e.capacity;
  }
  std::lock_guard<std::mutex> lock(e.mu);
  const size_t dim = size_t(e.dim);
  for (int64_t i = 0; i < count; ++i) {
    const char* frame = frames.data() + size_t(i) * frame_bytes;
    float* to = nullptr;
    if (e.frames.size() < size_t(e.capacity) * dim) {
      // Grown by doubling, never past the capacity reserved for it.
      if (e.frames.capacity() < e.frames.size() + dim) {
        e.frames.reserve(std::min(std::max(e.frames.size() + dim, 2 * e.frames.capacity()),
                                  size_t(e.capacity) * dim));
      }
      e.frames.resize(e.frames.size() + dim);
      to = e.frames.data() + e.frames.size() - dim;
    } else {
      to = e.frames.data() + size_t(e.next) * dim;
      e.next = (e.next + 1) % e.capacity;
    }
    std::memcpy(to, frame, frame_bytes);  // the wire's bytes may not be aligned for float
  }
}

absl::StatusOr<std::unique_ptr<KeptFrames::Writer>> KeptFrames::Open(const std::string& stream_id,
                                                                     int32_t dim, int32_t frames,
                                                                     Clock::time_point now) {
  if (frames < 1 || frames > limits_.max_frames_per_stream) {
    return absl::InvalidArgumentError(absl::StrCat("keep_frames ", frames, " is not in [1, ",
                                                   limits_.max_frames_per_stream,
                                                   "] (--max-adapt-frames)"));
  }
  const int64_t bytes = int64_t(frames) * dim * int64_t(sizeof(float)) + int64_t(stream_id.size()) +
                        kEntryOverheadBytes;
  std::lock_guard<std::mutex> lock(mu_);
  Expire(now);
  auto it = entries_.find(stream_id);
  int64_t replaced = 0;
  if (it != entries_.end()) {
    std::lock_guard<std::mutex> entry_lock(it->second->mu);
    if (it->second->live) {
      return absl::AlreadyExistsError(
          absl::StrCat("another stream keeps frames under stream_id '", stream_id, "'"));
    }
    replaced = it->second->bytes;
  }
  if (reserved_bytes_ - replaced + bytes > limits_.max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("keeping ", frames, " frames (", bytes,
                     " bytes with the entry) would pass --max-kept-bytes (", limits_.max_bytes,
                     "; ", reserved_bytes_, " kept by other streams)"));
  }
  auto entry = std::make_shared<Writer::Entry>(dim, frames, bytes);
  reserved_bytes_ += bytes - replaced;
  entries_[stream_id] = entry;
  return std::unique_ptr<Writer>(new Writer(std::move(entry)));
}

absl::StatusOr<Matrix> KeptFrames::Get(const std::string& stream_id, Clock::time_point now) {
  std::shared_ptr<Writer::Entry> entry;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Expire(now);
    auto it = entries_.find(stream_id);
    if (it == entries_.end()) {
      return absl::NotFoundError(absl::StrCat("no frames kept for stream '",
                                              stream_id.substr(0, 256),
                                              "' (StreamConfig.keep_frames; they go "
                                              "--kept-frames-ttl after the stream ends)"));
    }
    entry = it->second;
  }
  std::lock_guard<std::mutex> lock(entry->mu);
  const size_t dim = size_t(entry->dim);
  const int32_t held = int32_t(entry->frames.size() / dim);
  Matrix out(held, entry->dim);
  // Oldest first: from `next` to the end, then the start (next is 0 until the ring is full).
  const auto split = entry->frames.begin() + size_t(entry->next) * dim;
  std::copy(split, entry->frames.end(), out.data.begin());
  std::copy(entry->frames.begin(), split, out.data.begin() + (entry->frames.end() - split));
  return out;
}

int64_t KeptFrames::reserved_bytes() {
  std::lock_guard<std::mutex> lock(mu_);
  return reserved_bytes_;
}

void KeptFrames::Expire(Clock::time_point now) {
  const auto ttl = absl::ToChronoNanoseconds(limits_.ttl);
  for (auto it = entries_.begin(); it != entries_.end();) {
    bool expired = false;
    {
      std::lock_guard<std::mutex> lock(it->second->mu);
      expired = !it->second->live && now - it->second->ended >= ttl;
    }
    if (expired) {
      reserved_bytes_ -= it->second->bytes;
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace gmmscore::server

// Frames that Score streams keep for ModelAdmin.AdaptModel (StreamConfig.keep_frames,
// AdaptUtterance.from_stream): each stream's last N feature frames (the model's input: the
// client's features, or what the front end made of its audio), by stream_id, while the stream
// runs and for a time to live after it ends.
//
// Bounded before anything is allocated: a stream keeps at most max_frames_per_stream frames; all
// streams together at most max_bytes, reserved in full when a stream opens its Writer (its frames,
// its stream_id and kEntryOverheadBytes for the entry itself, so that many tiny streams are
// bounded too; a stream that would pass the bound is refused up front, not cut off later),
// released when its frames expire or a new stream replaces them; one live stream at a time keeps
// frames under an id. The frames themselves are allocated as they arrive. Expired entries go on
// the next Open or Get.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/clock.h"
#include "util/matrix.h"

namespace gmmscore::server {

struct KeptFramesLimits {
  int32_t max_frames_per_stream = 360000;
  int64_t max_bytes = int64_t(1) << 30;
  absl::Duration ttl = absl::Minutes(10);
};

class KeptFrames {
 public:
  // What an entry costs beside its frames and id (the map node, the entry, its mutex), rounded up.
  static constexpr int64_t kEntryOverheadBytes = 256;

  explicit KeptFrames(KeptFramesLimits limits) : limits_(limits) {}

  // What one stream writes through; destroying it ends the stream's keeping (the time to live
  // starts). Thread-compatible: one stream's reactions at a time.
  class Writer {
   public:
    ~Writer();
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;
    // Appends frames (dim little-endian float32 each, as the wire has them), keeping the last
    // capacity of all appended.
    void Append(std::string_view frames);

   private:
    friend class KeptFrames;
    struct Entry;
    explicit Writer(std::shared_ptr<Entry> entry) : entry_(std::move(entry)) {}
    std::shared_ptr<Entry> entry_;
  };

  // INVALID_ARGUMENT for frames outside [1, max_frames_per_stream], ALREADY_EXISTS while another
  // stream keeps frames under stream_id, RESOURCE_EXHAUSTED beyond max_bytes.
  absl::StatusOr<std::unique_ptr<Writer>> Open(const std::string& stream_id, int32_t dim,
                                               int32_t frames, Clock::time_point now);

  // A copy of the frames kept under stream_id, oldest first (frames x dim); NOT_FOUND where none
  // are (never kept, or expired).
  absl::StatusOr<Matrix> Get(const std::string& stream_id, Clock::time_point now);

  int64_t reserved_bytes();

 private:
  void Expire(Clock::time_point now);  // with mu_ held

  const KeptFramesLimits limits_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Writer::Entry>> entries_;
  int64_t reserved_bytes_ = 0;
};

}  // namespace gmmscore::server

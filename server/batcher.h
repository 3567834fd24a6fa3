// Cross-stream batching: windows of many streams that use the same model set are gathered into
// one Scorer::Score call per model, on the batcher's own worker threads (never gRPC threads).
//
// A batch starts when a worker is free and a queue holds --max-batch-frames frames, or its
// oldest window has waited --max-queue-delay; a batch takes whole windows in arrival order up to
// --max-batch-frames (at least one). One worker at a time serves a queue, so a stream's windows
// are scored and delivered in the order it submitted them. While a batch computes, the next one
// gathers: under load batches grow by themselves.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/util/matrix.h"
#include "server/config.h"
#include "server/metrics.h"
#include "server/model_registry.h"

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
  Matrix feats;             // frames x dim
  Clock::time_point ready;  // when the window was cut (its last frame had been read)
  Clock::time_point queued;
};

// Receives scored windows: one call per window, on a batcher thread, in submission order per
// queue. scores holds one frames x states matrix per model of the set.
class WindowSink {
 public:
  virtual ~WindowSink() = default;
  virtual void OnWindowScored(Window window, absl::StatusOr<std::vector<Matrix>> scores) = 0;
};

class Batcher {
 public:
  Batcher(const BatcherOptions& options, Metrics* metrics);
  ~Batcher();  // scores what is queued, then joins the workers
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // Never blocks on compute: queues the window and returns. Memory is bounded by the callers
  // (each stream keeps at most --max-stream-windows windows out).
  void Submit(const std::shared_ptr<const ModelSet>& models, Window window);
  // From now on, batches start without waiting for --max-queue-delay (draining).
  void Flush();

 private:
  struct Queue {
    std::shared_ptr<const ModelSet> models;
    std::deque<Window> windows;
    int64_t frames = 0;
    bool busy = false;  // a worker is scoring a batch of this queue
  };
  void Work();
  // With mu_ held: a queue ready for a batch, or null (and when to look again).
  Queue* PickReady(Clock::time_point now, Clock::time_point* next_check);
  void RunBatch(const ModelSet& models, std::vector<Window>& windows, int64_t frames);

  const BatcherOptions options_;
  Metrics* const metrics_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::map<std::string, Queue> queues_;
  bool flush_ = false;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace gmmscore::server

// Cross-stream batching: windows of many streams that use the same model set are gathered into
// one batch, scored in one launch per model on a lane (the CPU, or one GPU: lane.h) as a ScoreJob.
//
// A batch is ready when its queue holds --max-batch-frames frames, or its oldest window has
// waited --max-queue-delay; it takes whole windows in arrival order up to --max-batch-frames, or
// up to --catch-up-batch-frames from a queue that holds more (one that fell behind), and at least
// one. A ready batch goes to the least-loaded lane (fewest frames in flight, ties taken in
// turn) that has room for another batch (Lane::depth), so several GPUs share the work and one
// GPU overlaps a batch's copies with the next one's kernels. While lanes are busy the next batches
// gather: under load batches grow by themselves. Batches of one queue may finish out of order; the
// streams put their windows back in order (WindowSink).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/config.h"
#include "server/metrics.h"
#include "server/scheduling/batch.h"
#include "server/scheduling/lane.h"
#include "server/scheduling/task_queue.h"

namespace gmmscore::server {

class Batcher {
 public:
  // One thread per lane hands it batches; the lanes and the delivery threads (where scored
  // windows go back to their streams) outlive the Batcher. options.max_batch_frames > 0 (LaneSet
  // makes 0 its lanes' default).
  Batcher(const BatcherOptions& options, const std::vector<std::unique_ptr<Lane>>& lanes,
          TaskQueue* delivery, Metrics* metrics);
  ~Batcher();  // scores what is queued, waits for every batch in flight, then joins
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
  };
  struct LaneLoad {
    Lane* lane = nullptr;
    int32_t batches = 0;  // in flight
    int64_t frames = 0;   // in flight
  };
  void Feed(size_t lane);  // a lane's thread
  // With mu_ held: a queue ready for a batch, or null (and when to look again).
  Queue* PickReady(Clock::time_point now, Clock::time_point* next_check);
  // With mu_ held: whether lane i is the one a ready batch goes to now.
  bool IsLeastLoaded(size_t i) const;
  Batch TakeBatch(Queue* q);  // with mu_ held; drops the queue once empty
  void Finished(size_t lane, int64_t frames);

  const BatcherOptions options_;
  TaskQueue* const delivery_;
  Metrics* const metrics_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::map<std::string, Queue> queues_;
  std::vector<LaneLoad> lanes_;
  size_t next_tie_ = 0;  // the lane that wins the next tie of equal loads (round robin)
  bool flush_ = false;
  bool stop_ = false;
  std::vector<std::thread> threads_;  // last: start once the members above exist
};

}  // namespace gmmscore::server

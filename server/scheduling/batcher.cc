#include "server/scheduling/batcher.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server/scheduling/score_job.h"
#include "util/thread_name.h"

namespace gmmscore::server {
namespace {

double SecondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

Batcher::Batcher(const BatcherOptions& options, const std::vector<std::unique_ptr<Lane>>& lanes,
                 TaskQueue* delivery, Metrics* metrics)
    : options_(options), delivery_(delivery), metrics_(metrics) {
  for (const auto& lane : lanes) lanes_.push_back({lane.get()});
  for (size_t i = 0; i < lanes_.size(); ++i) {
    threads_.emplace_back([this, i] {
      NameThisThread(absl::StrCat("batch-", i));
      Feed(i);
    });
  }
}

Batcher::~Batcher() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    flush_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void Batcher::Submit(const std::shared_ptr<const ModelSet>& models, Window window) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    Queue& q = queues_[models->key];
    if (q.models == nullptr) q.models = models;
    window.queued = Clock::now();
    // The feeders need to know only when a queue starts (a new deadline: its first window's) or
    // fills; a window behind others changes neither. Waking them for every window cost a
    // context switch per window, the largest CPU cost of a loaded daemon.
    wake = q.windows.empty() || (q.frames < options_.max_batch_frames &&
                                 q.frames + window.feats.rows >= options_.max_batch_frames);
    q.frames += window.feats.rows;
    q.windows.push_back(std::move(window));
  }
  if (wake) wake_.notify_all();
}

void Batcher::Flush() {
  {
    std::lock_guard lock(mu_);
    flush_ = true;
  }
  wake_.notify_all();
}

Batcher::Queue* Batcher::PickReady(Clock::time_point now, Clock::time_point* next_check) {
  const auto delay = std::chrono::duration_cast<Clock::duration>(
      absl::ToChronoNanoseconds(options_.max_queue_delay));
  Queue* best = nullptr;
  *next_check = Clock::time_point::max();
  for (auto& [key, q] : queues_) {
    const Clock::time_point due = q.windows.front().queued + delay;
    if (flush_ || q.frames >= options_.max_batch_frames || now >= due) {
      // The queue whose oldest window has waited longest goes first.
      if (best == nullptr || q.windows.front().queued < best->windows.front().queued) best = &q;
    } else {
      *next_check = std::min(*next_check, due);
    }
  }
  return best;
}

bool Batcher::IsLeastLoaded(size_t i) const {
  for (size_t j = 0; j < lanes_.size(); ++j) {
    const LaneLoad& other = lanes_[j];
    if (j == i || other.batches >= other.lane->depth()) continue;
    // Ties go round robin from the lane after the one that took the last batch: breaking them
    // towards the first lane left a second GPU idle at moderate load.
    const auto turn = [&](size_t k) { return (k + lanes_.size() - next_tie_) % lanes_.size(); };
    if (other.frames < lanes_[i].frames ||
        (other.frames == lanes_[i].frames && turn(j) < turn(i))) {
      return false;
    }
  }
  return true;
}

Batch Batcher::TakeBatch(Queue* q) {
  Batch batch;
  batch.models = q->models;
  // Whole windows in arrival order (always at least one), up to max_batch_frames, or as many as
  // catch_up_batch_frames where more are queued: a queue that fell behind while the lanes were
  // busy can be taken in a few large batches instead of many small ones, each of which costs a
  // turn of a slot (on the H100 host a backlog of 30,000 frames drained at one 512-frame batch a
  // millisecond, about the rate frames arrived at 6000 streams).
  const int64_t limit = std::max(options_.max_batch_frames, options_.catch_up_batch_frames);
  while (!q->windows.empty() &&
         (batch.windows.empty() || batch.frames + q->windows.front().feats.rows <= limit)) {
    batch.frames += q->windows.front().feats.rows;
    batch.windows.push_back(std::move(q->windows.front()));
    q->windows.pop_front();
  }
  q->frames -= batch.frames;
  // An empty queue lets go of its models: an unloaded model is freed once its last stream and
  // its last window in flight are gone.
  if (q->windows.empty()) queues_.erase(batch.models->key);
  return batch;
}

void Batcher::Feed(size_t i) {
  LaneLoad& lane = lanes_[i];
  std::unique_lock lock(mu_);
  while (true) {
    Clock::time_point next_check = Clock::time_point::max();
    Queue* q = nullptr;
    if (lane.batches < lane.lane->depth()) {
      q = PickReady(Clock::now(), &next_check);
      if (q != nullptr && !IsLeastLoaded(i)) {
        // A lane with less in flight takes this one; look again when something changes.
        q = nullptr;
        next_check = Clock::time_point::max();
      }
    }
    if (q == nullptr) {
      if (stop_ && queues_.empty() && lane.batches == 0) return;
      if (next_check == Clock::time_point::max()) {
        wake_.wait(lock);
      } else {
        wake_.wait_until(lock, next_check);
      }
      continue;
    }
    Batch batch = TakeBatch(q);
    next_tie_ = (i + 1) % lanes_.size();
    ++lane.batches;
    lane.frames += batch.frames;
    lock.unlock();
    wake_.notify_all();  // the other lanes may now be the least loaded for the next batch
    const Clock::time_point start = Clock::now();
    for (const Window& w : batch.windows) {
      metrics_->queue_wait_seconds.Observe(SecondsBetween(w.queued, start));
    }
    metrics_->batch_frames.Observe(double(batch.frames));
    metrics_->device_frames_scored(lane.lane->device()).Increment(double(batch.frames));
    for (const auto& m : batch.models->models) {
      metrics_->frames_scored(m->name()).Increment(double(batch.frames));
    }
    const int64_t frames = batch.frames;
    lane.lane->Run(std::make_unique<ScoreJob>(std::move(batch), delivery_),
                   [this, i, frames] { Finished(i, frames); });
    lock.lock();
  }
}

void Batcher::Finished(size_t i, int64_t frames) {
  // Notified under the lock: once a lane's last batch is counted out, the destructor may join the
  // feeders and destroy wake_, which must not happen while this thread still touches it (TSan).
  std::lock_guard lock(mu_);
  --lanes_[i].batches;
  lanes_[i].frames -= frames;
  wake_.notify_all();
}

}  // namespace gmmscore::server

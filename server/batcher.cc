#include "server/batcher.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace gmmscore::server {
namespace {

double SecondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

std::shared_ptr<const ModelSet> ModelSet::Make(std::vector<std::shared_ptr<ModelEntry>> models) {
  auto set = std::make_shared<ModelSet>();
  for (const auto& m : models) {
    absl::StrAppend(&set->key, set->key.empty() ? "" : "+", m->name(), "@", m->version());
  }
  set->models = std::move(models);
  return set;
}

Batcher::Batcher(const BatcherOptions& options, Metrics* metrics)
    : options_(options), metrics_(metrics) {
  for (int32_t i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { Work(); });
}

Batcher::~Batcher() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    flush_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void Batcher::Submit(const std::shared_ptr<const ModelSet>& models, Window window) {
  {
    std::lock_guard lock(mu_);
    Queue& q = queues_[models->key];
    if (q.models == nullptr) q.models = models;
    window.queued = Clock::now();
    q.frames += window.feats.rows;
    q.windows.push_back(std::move(window));
  }
  wake_.notify_one();
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
    if (q.busy || q.windows.empty()) continue;
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

void Batcher::Work() {
  std::unique_lock lock(mu_);
  while (true) {
    Clock::time_point next_check;
    Queue* q = PickReady(Clock::now(), &next_check);
    if (q == nullptr) {
      if (stop_) {
        // Exit once nothing is queued; another worker may still be scoring a batch.
        const bool empty = std::all_of(queues_.begin(), queues_.end(),
                                       [](const auto& kv) { return kv.second.windows.empty(); });
        if (empty) return;
      }
      if (next_check == Clock::time_point::max()) {
        wake_.wait(lock);
      } else {
        wake_.wait_until(lock, next_check);
      }
      continue;
    }
    // Whole windows in arrival order, up to max_batch_frames (always at least one).
    std::vector<Window> batch;
    int64_t frames = 0;
    while (!q->windows.empty() &&
           (batch.empty() || frames + q->windows.front().feats.rows <= options_.max_batch_frames)) {
      frames += q->windows.front().feats.rows;
      batch.push_back(std::move(q->windows.front()));
      q->windows.pop_front();
    }
    q->frames -= frames;
    q->busy = true;
    const std::shared_ptr<const ModelSet> models = q->models;
    lock.unlock();
    RunBatch(*models, batch, frames);
    batch.clear();  // releases the sessions outside the lock
    lock.lock();
    q->busy = false;
    if (q->windows.empty()) {
      // Drops the queue's reference to the models: an unloaded model is freed once its last
      // stream and its last queued window are gone.
      queues_.erase(q->models->key);
    } else {
      wake_.notify_one();
    }
  }
}

void Batcher::RunBatch(const ModelSet& models, std::vector<Window>& windows, int64_t frames) {
  const Clock::time_point start = Clock::now();
  for (const Window& w : windows)
    metrics_->queue_wait_seconds.Observe(SecondsBetween(w.queued, start));
  metrics_->batch_frames.Observe(double(frames));

  const int32_t dim = windows.front().feats.cols;
  Matrix feats;
  const Matrix* input = &windows.front().feats;
  if (windows.size() > 1) {
    feats.Resize(int32_t(frames), dim);
    float* dst = feats.data.data();
    for (const Window& w : windows) {
      std::memcpy(dst, w.feats.data.data(), w.feats.data.size() * sizeof(float));
      dst += w.feats.data.size();
    }
    input = &feats;
  }
  std::vector<Matrix> scores(models.models.size());
  absl::Status status;
  for (size_t k = 0; k < models.models.size() && status.ok(); ++k) {
    status = models.models[k]->scorer().Score(*input, &scores[k]);
  }
  metrics_->compute_seconds.Observe(SecondsBetween(start, Clock::now()));
  for (const auto& m : models.models) metrics_->frames_scored(m->name()).Increment(double(frames));

  int32_t row = 0;
  for (Window& w : windows) {
    const int32_t n = w.feats.rows;
    std::vector<Matrix> parts(status.ok() ? scores.size() : 0);
    for (size_t k = 0; k < parts.size(); ++k) {
      parts[k].Resize(n, scores[k].cols);
      std::memcpy(parts[k].data.data(), scores[k].row(row),
                  size_t(n) * size_t(scores[k].cols) * sizeof(float));
    }
    absl::StatusOr<std::vector<Matrix>> result =
        status.ok() ? absl::StatusOr<std::vector<Matrix>>(std::move(parts)) : status;
    row += n;
    std::shared_ptr<WindowSink> sink = w.sink;
    sink->OnWindowScored(std::move(w), std::move(result));
  }
}

}  // namespace gmmscore::server

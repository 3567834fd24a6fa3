#include "server/scheduling/batch_delivery.h"

#include <algorithm>
#include <atomic>
#include <memory>

namespace gmmscore::server {
namespace {

// What the delivery tasks of one batch share.
struct Delivery {
  Batch batch;
  BatchScores scores;
  std::vector<int32_t> first_row;  // per window
  std::function<void()> release;
  std::atomic<int32_t> tasks_left{0};
};

// Windows [begin, end): each sink gets views of its rows in the batch's buffers; the last task to
// finish lets go of the buffers.
void DeliverRange(const std::shared_ptr<Delivery>& d, size_t begin, size_t end) {
  const ModelSet& set = *d->batch.models;
  for (size_t i = begin; i < end; ++i) {
    Window& w = d->batch.windows[i];
    const int32_t rows = w.feats.rows;
    const size_t offset = size_t(d->first_row[i]) * size_t(d->scores.states);
    WindowScores views;
    if (d->scores.fused != nullptr && FusedByBackend(set, w)) {
      views.emplace_back(d->scores.fused + offset, rows, d->scores.states);
    } else {
      for (const float* model : d->scores.per_model) {
        views.emplace_back(model + offset, rows, d->scores.states);
      }
    }
    if (d->scores.encoded16 != nullptr && w.encoding != ScoreEncoding16::kNone &&
        views.size() == 1) {
      w.encoded = {d->scores.encoded16 + offset, d->scores.best_states + d->first_row[i],
                   d->scores.best_scores + d->first_row[i]};
    }
    std::shared_ptr<WindowSink> sink = w.sink;
    sink->OnWindowScored(std::move(w), std::move(views));
  }
  if (d->tasks_left.fetch_sub(1) == 1) d->release();
}

}  // namespace

void DeliverScores(Batch&& batch, const BatchScores& scores, TaskQueue* pool,
                   std::function<void()> release) {
  auto d = std::make_shared<Delivery>();
  d->scores = scores;
  d->release = std::move(release);
  int32_t row = 0;
  for (const Window& w : batch.windows) {
    d->first_row.push_back(row);
    row += w.feats.rows;
  }
  d->batch = std::move(batch);
  // One task per delivery thread at most, each of at least kWindowsPerTask windows: every task
  // posted wakes a thread, and a context switch per window (four tasks per thread, as this
  // first did) cost more CPU than the encoding it spread.
  constexpr size_t kWindowsPerTask = 4;
  const size_t windows = d->batch.windows.size();
  const size_t tasks =
      std::min((windows + kWindowsPerTask - 1) / kWindowsPerTask, size_t(pool->threads()));
  if (tasks == 0) {
    d->release();
    return;
  }
  d->tasks_left = int32_t(tasks);
  for (size_t t = 0; t < tasks; ++t) {
    const size_t begin = windows * t / tasks, end = windows * (t + 1) / tasks;
    pool->Post([d, begin, end] { DeliverRange(d, begin, end); });
  }
}

void DeliverFailure(Batch batch, const absl::Status& status, TaskQueue* pool) {
  auto shared = std::make_shared<Batch>(std::move(batch));
  pool->Post([shared, status] {
    for (Window& w : shared->windows) {
      std::shared_ptr<WindowSink> sink = w.sink;
      sink->OnWindowScored(std::move(w), status);
    }
  });
}

}  // namespace gmmscore::server

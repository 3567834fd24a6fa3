#include "server/scheduling/batch_delivery.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <memory>
#include <span>
#include <string>

#include "proto/wire_codec.h"
#include "util/flush_scope.h"

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

// What the device made of window w's rows (16-bit rows, which become its response's scores as
// they are; or BEAM_SPARSE candidates) into w.encoded; false, and nothing, where it made
// nothing of them or left a row to the host (a NaN in it, or more candidates than it had room
// for).
bool TakeEncoded(const BatchScores& scores, int32_t first, Window* w) {
  const int32_t rows = w->feats.rows, states = scores.states;
  if (scores.best_states == nullptr) return false;
  const int32_t* best = scores.best_states + first;
  if (!std::all_of(best, best + rows, [](int32_t s) { return s >= 0; })) return false;
  if (w->encoding == DeviceScoreEncoding::kBeamSparse) {
    const BeamCandidates& beam = scores.beam;
    if (beam.counts == nullptr) return false;
    const int32_t* counts = beam.counts + first;
    if (!std::all_of(counts, counts + rows, [](int32_t n) { return n >= 0; })) return false;
    w->encoded.beam_counts.assign(counts, counts + rows);
    for (int32_t t = first; t < first + rows; ++t) {
      const size_t at = size_t(t) * size_t(beam.capacity), n = size_t(beam.counts[t]);
      w->encoded.beam_scores.insert(w->encoded.beam_scores.end(), beam.scores + at,
                                    beam.scores + at + n);
      w->encoded.beam_states.insert(w->encoded.beam_states.end(), beam.states + at,
                                    beam.states + at + n);
    }
  } else {
    if (scores.encoded16 == nullptr) return false;
    const std::span<const uint16_t> values(scores.encoded16 + size_t(first) * size_t(states),
                                           size_t(rows) * size_t(states));
    if (scores.encoded16_owner != nullptr && std::endian::native == std::endian::little) {
      // The device's values are the wire's bytes: the response sends them from the lent buffer.
      w->encoded.values = {scores.encoded16_owner,
                           {reinterpret_cast<const char*>(values.data()), values.size_bytes()}};
    } else {
      std::string bytes;
      wire::AppendUint16(values, &bytes);
      w->encoded.values = SharedBytes::Own(std::move(bytes));
    }
  }
  w->encoded.best_states.assign(best, best + rows);
  w->encoded.best_scores.assign(scores.best_scores + first, scores.best_scores + first + rows);
  return true;
}

// Windows [begin, end): first every window's rows are copied out of the batch's buffers (what
// the device made of them, TakeEncoded; else their float rows), and the last task to finish
// copying releases the buffers, so the GPU's next batch never waits for the streams' encoding;
// then the sinks run.
void DeliverRange(const std::shared_ptr<Delivery>& d, size_t begin, size_t end) {
  const ModelSet& set = *d->batch.models;
  const int32_t states = d->scores.states;
  std::vector<std::vector<Matrix>> copies(end - begin);
  std::vector<absl::Status> failed(end - begin);
  for (size_t i = begin; i < end; ++i) {
    Window& w = d->batch.windows[i];
    const int32_t rows = w.feats.rows, first = d->first_row[i];
    const size_t offset = size_t(first) * size_t(states);
    const bool fused = d->scores.fused != nullptr && FusedByBackend(set, w);
    if (fused && w.encoding != DeviceScoreEncoding::kNone) {
      if (TakeEncoded(d->scores, first, &w)) continue;
      // A row the device left to the host: its float rows may still be on the device.
      if (d->scores.fetch_fused) {
        failed[i - begin] = d->scores.fetch_fused(first, rows);
        if (!failed[i - begin].ok()) continue;
      }
    }
    WindowScores views;
    if (fused) {
      views.emplace_back(d->scores.fused + offset, rows, states);
    } else {
      for (const float* model : d->scores.per_model)
        views.emplace_back(model + offset, rows, states);
    }
    copies[i - begin] = CopyScores(views);
  }
  if (d->tasks_left.fetch_sub(1) == 1) d->release();
  // Streams that share a ScoreStreams call send these windows in one message.
  FlushScope flush_at_end;
  for (size_t i = begin; i < end; ++i) {
    Window& w = d->batch.windows[i];
    std::shared_ptr<WindowSink> sink = w.sink;
    if (!failed[i - begin].ok()) {
      sink->OnWindowScored(std::move(w), failed[i - begin]);
      continue;
    }
    WindowScores views = w.encoded.empty() ? ViewScores(copies[i - begin]) : WindowScores();
    sink->OnWindowScored(std::move(w), std::move(views));
  }
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

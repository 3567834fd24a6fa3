#include "server/scheduling/viterbi_queue.h"

#include <new>
#include <utility>

#include "util/thread_name.h"

namespace gmmscore::server {

ViterbiQueue::ViterbiQueue(std::vector<BatchViterbi*> devices) {
  for (BatchViterbi* device : devices) {
    threads_.emplace_back([this, device] {
      NameThisThread("viterbi");
      Run(device);
    });
  }
}

ViterbiQueue::~ViterbiQueue() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ViterbiQueue::Submit(ViterbiJob job) {
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

std::vector<ViterbiJob> ViterbiQueue::TakeBatchLocked() {
  std::vector<ViterbiJob> batch;
  int64_t floats = 0;
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    const int64_t n = int64_t(it->loglikes.data.size());
    const bool same = batch.empty() || (it->model == batch.front().model &&
                                        it->acoustic_scale == batch.front().acoustic_scale);
    if (!same) {
      ++it;
      continue;
    }
    if (!batch.empty() && floats + n > kMaxBatchFloats) break;
    floats += n;
    batch.push_back(std::move(*it));
    it = jobs_.erase(it);
  }
  return batch;
}

void ViterbiQueue::Run(BatchViterbi* device) {
  while (true) {
    std::vector<ViterbiJob> batch;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, and nothing left
      batch = TakeBatchLocked();
      // More than one batch's worth queued: another thread may take the rest.
      if (!jobs_.empty()) wake_.notify_one();
    }
    Align(device, std::move(batch));
  }
}

void ViterbiQueue::Align(BatchViterbi* device, std::vector<ViterbiJob> batch) {
  std::vector<ViterbiUtterance> utterances;
  for (const ViterbiJob& job : batch) utterances.push_back({&job.graph, &job.loglikes});
  absl::StatusOr<std::vector<ViterbiResult>> results;
  try {
    results = device->Align(utterances, *batch.front().model, batch.front().acoustic_scale);
  } catch (const std::bad_alloc&) {
    results = absl::ResourceExhaustedError("out of memory aligning a batch");
  }
  if (!results.ok() && batch.size() > 1) {
    // Each job alone: one that cannot be aligned (too large for the device) fails by itself.
    for (ViterbiJob& job : batch) {
      std::vector<ViterbiJob> one;
      one.push_back(std::move(job));
      Align(device, std::move(one));
    }
    return;
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!results.ok()) {
      batch[i].done(results.status());
    } else {
      batch[i].done(std::move((*results)[i]));
    }
  }
}

}  // namespace gmmscore::server

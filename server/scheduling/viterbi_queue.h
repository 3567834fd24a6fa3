// The Align calls' Viterbi on the GPUs: a call whose frames are scored submits its graph (with
// its transition costs) and its scores; a thread per GPU takes every job queued for the same
// transition model and acoustic scale, up to a batch's worth of scores, and aligns them in one
// BatchViterbi call (kernels/cuda/align/cuda_viterbi.h: a launch for the batch), so concurrent
// calls share launches as score windows share batches. Where a batch fails as a whole (no room on
// the device), its jobs are aligned one at a time, so that each gets its own answer.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/batch_viterbi.h"
#include "model/align_graph.h"
#include "model/transition_model.h"
#include "util/matrix.h"

namespace gmmscore::server {

struct ViterbiJob {
  AlignGraph graph;                        // validated, transition costs added
  Matrix loglikes;                         // frames x the model's pdfs
  const TransitionModel* model = nullptr;  // must outlive the job (done's owner keeps it)
  float acoustic_scale = 1.0f;
  std::function<void(absl::StatusOr<ViterbiResult>)> done;  // on a queue thread
};

class ViterbiQueue {
 public:
  // devices: one per GPU, borrowed (they must outlive the queue).
  explicit ViterbiQueue(std::vector<BatchViterbi*> devices);
  ~ViterbiQueue();  // aligns what is queued, then joins
  ViterbiQueue(const ViterbiQueue&) = delete;
  ViterbiQueue& operator=(const ViterbiQueue&) = delete;

  void Submit(ViterbiJob job);

  // A batch's scores are uploaded whole: at most this many floats (1 GB) in one, and at least one
  // job.
  static constexpr int64_t kMaxBatchFloats = int64_t(1) << 28;

 private:
  void Run(BatchViterbi* device);
  // The jobs at the front that share the first one's model and scale, within kMaxBatchFloats.
  std::vector<ViterbiJob> TakeBatchLocked();
  static void Align(BatchViterbi* device, std::vector<ViterbiJob> batch);

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<ViterbiJob> jobs_;
  bool stop_ = false;
  std::vector<std::thread> threads_;  // last: start after the members they use
};

}  // namespace gmmscore::server

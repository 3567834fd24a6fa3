// A GPU lane: every model resident on one device, batches scored through two pipeline slots
// (CudaSetWorkspace: pinned staging, device buffers, a CUDA stream each), so that one batch's
// features go in while the other's kernels run and its scores come out. The lane's thread (the
// Batcher's) enqueues a batch on a free slot and returns; the lane's own thread waits for the
// slots in order and hands the scores to delivery, which frees the slot once every window's rows
// are copied out. Max, log-linear and log-add are fused on the device; select windows get each
// model's scores (the stream fuses them).
#pragma once

#include <array>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "kernels/cuda/cuda_scorer.h"
#include "kernels/cuda/cuda_set_workspace.h"
#include "server/metrics.h"
#include "server/scoring_lane.h"
#include "server/timer_queue.h"

namespace gmmscore::server {

class CudaLane final : public ScoringLane {
 public:
  // index: the lane's scorer_index; max_frames: the frames a batch can hold.
  static absl::StatusOr<std::unique_ptr<CudaLane>> Create(int device, int32_t index,
                                                          int32_t max_frames, TaskQueue* delivery,
                                                          Metrics* metrics);
  ~CudaLane() override;  // after the Batcher: no batch is in flight any more

  const std::string& device() const override { return name_; }
  int32_t scorer_index() const override { return index_; }
  int32_t depth() const override { return kSlots; }
  void Run(Batch batch, std::function<void()> done) override;
  // A CudaScorer on the device, its autotune run for every batch size at once (so that no batch
  // waits for it), and both slots' buffers grown for batches of the model.
  absl::StatusOr<ResidentScorer> MakeScorer(const GmmModel& model) override;

 private:
  static constexpr int32_t kSlots = 2;
  struct InFlight {
    int32_t slot = 0;
    Batch batch;
    std::function<void()> done;
    bool per_model = false;  // each model's scores were copied back (select windows)
    Clock::time_point start;
  };

  CudaLane(int device, int32_t index, int32_t max_frames, TaskQueue* delivery, Metrics* metrics);
  int32_t AcquireSlot();  // waits for a free slot and marks it busy
  void ReleaseSlot(int32_t slot);
  absl::Status Enqueue(CudaSetWorkspace& workspace, const Batch& batch, bool* per_model);
  void Complete();  // the completion thread

  const int device_;
  const int32_t index_;
  const int32_t max_frames_;
  const std::string name_;
  TaskQueue* const delivery_;
  Metrics* const metrics_;
  std::array<std::unique_ptr<CudaSetWorkspace>, kSlots> slots_;

  std::mutex mu_;
  std::condition_variable changed_;
  std::array<bool, kSlots> busy_ = {};
  std::deque<InFlight> in_flight_;  // enqueued, in order
  bool stop_ = false;
  std::thread completer_;  // last: starts once the members above exist
};

}  // namespace gmmscore::server

// A lane: one place jobs run (the CPU, or one GPU: a ComputeDevice), with as many jobs in flight
// as the device has batch slots. The caller's thread (the Batcher's, for score batches) stages and
// enqueues a job on a free slot and returns; the lane's own thread waits for the slots in the order
// they were enqueued and hands each job its results, which the job passes on (score windows to
// their streams, through the delivery threads) before it frees the slot.
//
// Jobs are what runs on a slot: a batch of score windows now (score_job.h); alignment and
// statistics jobs against the same resident models next.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/compute_device.h"
#include "model/gmm_model.h"
#include "server/metrics.h"
#include "server/scheduling/batch.h"

namespace gmmscore::server {

class LaneJob {
 public:
  virtual ~LaneJob() = default;
  // On the caller's thread, with the slot to itself: stages the job's inputs and enqueues its
  // device work. `residency_index` says which of each ModelEntry's residents are this device's.
  virtual absl::Status Enqueue(BatchSlot& slot, int32_t residency_index) = 0;
  // On the lane's thread once the slot's work is done (or failed: status, the device named):
  // reads the slot's outputs and hands them on. `release` frees the slot; it must run exactly
  // once, after the last read of the slot.
  virtual void Complete(BatchSlot& slot, const absl::Status& status,
                        std::function<void()> release) = 0;
};

class Lane {
 public:
  Lane(std::unique_ptr<ComputeDevice> device, Metrics* metrics);
  ~Lane();  // after the Batcher: no job is in flight any more
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;

  // "cpu", "cuda:0", ...
  const std::string& device() const { return device_->name(); }
  // Which of a ModelEntry's residents (one per residency index) this lane uses.
  int32_t residency_index() const { return device_->residency_index(); }
  // Jobs in flight at once; the Batcher hands the lane no more.
  int32_t depth() const { return device_->num_slots(); }

  // Runs the job on a free slot (waiting for one). done() runs exactly once, maybe on another
  // thread, when the lane can take another job in this one's place. A failure to enqueue (an
  // exception included: a failed allocation is RESOURCE_EXHAUSTED) goes to the job's Complete
  // with the slot's work not started.
  void Run(std::unique_ptr<LaneJob> job, std::function<void()> done);

  // The model resident on this lane's device. Lanes sharing a residency index share it: only the
  // first of them is asked. Fails, naming the device and the bytes, when it does not fit.
  absl::StatusOr<std::unique_ptr<ResidentModel>> MakeResident(const GmmModel& model);
  // Readies every slot for jobs of the model (each slot waits until no job uses it).
  absl::Status Prepare(const ResidentModel& model);

 private:
  struct InFlight {
    int32_t slot = 0;
    std::unique_ptr<LaneJob> job;
    std::function<void()> done;
    Clock::time_point start;
  };
  int32_t AcquireSlot(int32_t wanted);  // waits for slot `wanted` (-1: any) and marks it busy
  void ReleaseSlot(int32_t slot);
  void Complete();  // the lane's thread

  const std::unique_ptr<ComputeDevice> device_;
  Metrics* const metrics_;

  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<bool> busy_;
  std::deque<InFlight> in_flight_;  // enqueued, in order
  // Since when the device has had a job in flight (counted into busy_seconds_ at completions).
  Clock::time_point busy_since_;
  prometheus::Counter* busy_seconds_;
  bool stop_ = false;
  std::thread completer_;  // last: starts once the members above exist
};

}  // namespace gmmscore::server

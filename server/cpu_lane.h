// The CPU lane: a batch scored by each model's CpuScorer (OpenMP threads) on the lane's thread.
// --batch-workers lanes share each model's scorer. Fusion is left to the streams.
#pragma once

#include <string>

#include "server/metrics.h"
#include "server/scoring_lane.h"
#include "server/timer_queue.h"

namespace gmmscore::server {

class CpuLane final : public ScoringLane {
 public:
  CpuLane(int32_t scorer_threads, TaskQueue* delivery, Metrics* metrics)
      : scorer_threads_(scorer_threads), delivery_(delivery), metrics_(metrics) {}

  const std::string& device() const override { return device_; }
  int32_t scorer_index() const override { return 0; }
  int32_t depth() const override { return 1; }
  void Run(Batch batch, std::function<void()> done) override;
  absl::StatusOr<ResidentScorer> MakeScorer(const GmmModel& model) override;

 private:
  const std::string device_ = "cpu";
  const int32_t scorer_threads_;
  TaskQueue* const delivery_;
  Metrics* const metrics_;
};

}  // namespace gmmscore::server

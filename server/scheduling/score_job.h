// A batch of score windows (batch.h) as a lane job: the windows' frames staged side by side, every
// model of the set scored on the slot, the windows the device fuses (FusedByBackend: max,
// log-linear, log-add) fused there, and each window's rows handed to its stream on the delivery
// threads (batch_delivery.h), which free the slot once the rows are copied out.
#pragma once

#include <functional>

#include "server/scheduling/batch.h"
#include "server/scheduling/lane.h"
#include "server/scheduling/task_queue.h"

namespace gmmscore::server {

class ScoreJob final : public LaneJob {
 public:
  ScoreJob(Batch batch, TaskQueue* delivery) : batch_(std::move(batch)), delivery_(delivery) {}

  absl::Status Enqueue(BatchSlot& slot, int32_t residency_index) override;
  void Complete(BatchSlot& slot, const absl::Status& status,
                std::function<void()> release) override;

 private:
  Batch batch_;
  TaskQueue* const delivery_;
  bool per_model_ = false;  // each model's scores are read back (select windows)
};

}  // namespace gmmscore::server

// The daemon's lanes, one per compute device that kernels/backend.h chose from --backend and
// --devices: a lane per selected GPU, or --batch-workers CPU lanes sharing each model's packed
// layout; and the delivery threads that hand scored windows back to their streams.
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "model/gmm_model.h"
#include "server/config.h"
#include "server/metrics.h"
#include "server/model_entry.h"
#include "server/scheduling/lane.h"
#include "server/scheduling/task_queue.h"

namespace gmmscore::server {

class LaneSet {
 public:
  // Errors name the flag (--backend cuda without a GPU, --devices of no such GPU).
  static absl::StatusOr<std::unique_ptr<LaneSet>> Create(const ServerConfig& config,
                                                         Metrics* metrics);
  LaneSet(const LaneSet&) = delete;
  LaneSet& operator=(const LaneSet&) = delete;

  // A model resident on every device, one per residency index of the lanes (in index order), each
  // lane's slots ready for it. Fails, naming the device, where the model does not fit.
  absl::StatusOr<std::vector<Residency>> MakeResidents(const GmmModel& model);

  const std::vector<std::unique_ptr<Lane>>& lanes() const { return lanes_; }
  TaskQueue* delivery() { return &delivery_; }
  // The batcher's options, --max-batch-frames 0 made the lanes' default (BatcherOptions).
  const BatcherOptions& batcher_options() const { return batcher_options_; }
  // A Viterbi per GPU of the lanes (none on the CPU backend: alignments are the CPU aligner's).
  std::vector<BatchViterbi*> viterbis() const;

 private:
  explicit LaneSet(int32_t delivery_threads) : delivery_(delivery_threads, "deliver") {}

  TaskQueue delivery_;  // first: the lanes post to it until they are gone
  std::vector<std::unique_ptr<Lane>> lanes_;
  BatcherOptions batcher_options_;
  std::vector<std::unique_ptr<BatchViterbi>> viterbis_;
};

}  // namespace gmmscore::server

// Where gmmscored scores, from --backend and --devices: on the CPU (--batch-workers lanes sharing
// each model's CpuScorer) or on GPUs (a lane per selected device, every model resident on each);
// and the delivery threads that hand scored windows back to their streams.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/model/gmm_model.h"
#include "server/config.h"
#include "server/metrics.h"
#include "server/model_registry.h"
#include "server/scoring_lane.h"
#include "server/timer_queue.h"

namespace gmmscore::server {

class Backend {
 public:
  // Resolves --backend auto (CUDA when a GPU is usable, else the CPU) and says on stderr what it
  // chose and, falling back to the CPU, why. Errors name the flag.
  static absl::StatusOr<std::unique_ptr<Backend>> Create(const ServerConfig& config,
                                                         Metrics* metrics);
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  // A model's scorers, one per scorer_index of the lanes, each resident on its device with the
  // lane's buffers for it. Fails, naming the device, where the model does not fit.
  absl::StatusOr<std::vector<ResidentScorer>> MakeScorers(const GmmModel& model);

  const std::vector<std::unique_ptr<ScoringLane>>& lanes() const { return lanes_; }

 private:
  explicit Backend(int32_t delivery_threads) : delivery_(delivery_threads) {}

  TaskQueue delivery_;  // first: the lanes post to it until they are gone
  std::vector<std::unique_ptr<ScoringLane>> lanes_;
};

}  // namespace gmmscore::server

// A lane: one place batches are scored (the CPU, or one GPU), with as many batches in flight as
// it can overlap. The Batcher hands each ready batch to the least-loaded lane with room.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "kernels/model/gmm_model.h"
#include "kernels/scorer.h"
#include "server/batch.h"

namespace gmmscore::server {

class ScoringLane {
 public:
  virtual ~ScoringLane() = default;
  // "cpu", "cuda:0", ...
  virtual const std::string& device() const = 0;
  // Which of a ModelEntry's scorers (one per device) this lane scores with.
  virtual int32_t scorer_index() const = 0;
  // Batches in flight at once; the Batcher hands the lane no more.
  virtual int32_t depth() const = 0;
  // Scores the batch against its set (each model's scorer_index() scorer) and hands the windows
  // to delivery. done() runs exactly once, maybe on another thread, when the lane can take
  // another batch in this one's place. A lane of depth 1 may score on the calling thread; a
  // deeper one returns once the batch is on its way.
  virtual void Run(Batch batch, std::function<void()> done) = 0;
  // The scorer of a model resident on this lane's device, with the lane's buffers for batches of
  // it. Fails, naming the device and the bytes, when they do not fit. Lanes sharing a
  // scorer_index share the scorer: only the first of them is asked.
  virtual absl::StatusOr<ResidentScorer> MakeScorer(const GmmModel& model) = 0;
};

}  // namespace gmmscore::server

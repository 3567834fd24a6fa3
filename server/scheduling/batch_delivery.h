// Handing a scored batch's rows to its windows' streams on the delivery threads: a batch of many
// streams' windows is cut up and encoded by the streams in parallel, never on the thread that
// waits for the device.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "server/scheduling/batch.h"
#include "server/scheduling/task_queue.h"

namespace gmmscore::server {

// A scored batch's rows, frames x states each, in the windows' order.
struct BatchScores {
  int32_t states = 0;
  // The fused scores, for the windows FusedByBackend says the backend fused; null: none fused.
  const float* fused = nullptr;
  // Each model's scores; may be empty when every window is fused.
  std::vector<const float*> per_model;
  // Where the device encoded (BatchSlot::encoded16, best_states, best_scores): the 16-bit rows
  // and each frame's best.
  const uint16_t* encoded16 = nullptr;
  // The buffer of encoded16 where the slot lent it (BatchSlot::LendEncoded16): windows keep their
  // rows in it, past release. Null: they are copied out.
  std::shared_ptr<const uint16_t> encoded16_owner;
  const int32_t* best_states = nullptr;
  const float* best_scores = nullptr;
  BeamCandidates beam;  // where the device selected BEAM_SPARSE candidates
  // Makes fused rows [first, first + rows) readable where the device left the rows of encoded
  // windows on the device (BatchSlot::FetchFusedRows): for a window it asked to encode but could
  // not. Null: they are all readable.
  std::function<absl::Status(int32_t first, int32_t rows)> fetch_fused;
};

// Calls each window's sink with its rows (one matrix where fused, else one per model) or, where
// the device encoded them, the window's encoded rows, on `pool`. release runs once every window's
// rows are copied out of the scores' buffers, before the sinks are called.
void DeliverScores(Batch&& batch, const BatchScores& scores, TaskQueue* pool,
                   std::function<void()> release);
// Every window of the batch gets `status`, on `pool`.
void DeliverFailure(Batch batch, const absl::Status& status, TaskQueue* pool);

}  // namespace gmmscore::server

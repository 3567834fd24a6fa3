#include "server/scheduling/score_job.h"

#include <cstring>
#include <new>
#include <vector>

#include "server/scheduling/batch_delivery.h"
#include "util/status_macros.h"

namespace gmmscore::server {

absl::Status ScoreJob::Enqueue(BatchSlot& slot, int32_t residency_index) {
  const ModelSet& set = *batch_.models;
  std::vector<const ResidentModel*> models;
  for (const std::shared_ptr<ModelEntry>& entry : set.models) {
    models.push_back(&entry->resident(residency_index));
  }
  std::vector<FusionSegment> segments;
  GMM_ASSIGN_OR_RETURN(float* staged, slot.Stage(models, int32_t(batch_.frames)));
  for (const Window& w : batch_.windows) {
    const bool fused = FusedByBackend(set, w);
    per_model_ = per_model_ || !fused;
    segments.push_back({w.feats.rows, fused && models.size() > 1 ? w.fusion.get() : nullptr,
                        fused ? w.encoding : DeviceScoreEncoding::kNone, w.beam});
    std::memcpy(staged, w.feats.data.data(), w.feats.data.size() * sizeof(float));
    staged += w.feats.data.size();
  }
  return slot.EnqueueScores(models, segments, int32_t(batch_.frames), per_model_);
}

void ScoreJob::Complete(BatchSlot& slot, const absl::Status& status,
                        std::function<void()> release) {
  absl::Status failure = status;
  if (failure.ok()) {
    try {
      const ModelSet& set = *batch_.models;
      BatchScores scores;
      scores.states = set.models.front()->num_states();
      scores.fused = slot.fused();
      scores.encoded16 = slot.encoded16();
      if (scores.encoded16 != nullptr) scores.encoded16_owner = slot.LendEncoded16();
      scores.best_states = slot.best_states();
      scores.best_scores = slot.best_scores();
      scores.beam = slot.beam_candidates();
      // The slot is not reused before release, which the delivery calls after every copy.
      scores.fetch_fused = [&slot](int32_t first, int32_t rows) {
        return slot.FetchFusedRows(first, rows);
      };
      if (per_model_ || scores.fused == nullptr) {
        for (size_t k = 0; k < set.models.size(); ++k) {
          scores.per_model.push_back(slot.model_scores(int32_t(k)));
        }
      }
      DeliverScores(std::move(batch_), scores, delivery_, release);
      return;
    } catch (const std::bad_alloc&) {
      // Before any window was handed over: the windows still get their answer.
      failure = absl::ResourceExhaustedError("out of memory delivering scores");
    }
  }
  release();
  DeliverFailure(std::move(batch_), failure, delivery_);
}

}  // namespace gmmscore::server

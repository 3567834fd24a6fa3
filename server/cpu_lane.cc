#include "server/cpu_lane.h"

#include <cstring>
#include <memory>
#include <vector>

#include "kernels/cpu/cpu_scorer.h"
#include "server/batch_delivery.h"

namespace gmmscore::server {

absl::StatusOr<ResidentScorer> CpuLane::MakeScorer(const GmmModel& model) {
  ResidentScorer s;
  s.scorer = std::make_unique<CpuScorer>(model, scorer_threads_);
  s.device = device_;
  // The packed CPU layout holds u and v per Gaussian and dimension plus one constant.
  s.bytes = model.num_gauss() * (2 * int64_t(model.dim()) + 1) * int64_t(sizeof(float));
  return s;
}

void CpuLane::Run(Batch batch, std::function<void()> done) {
  const Clock::time_point start = Clock::now();
  const Matrix* input = &batch.windows.front().feats;
  Matrix joined;
  if (batch.windows.size() > 1) {
    joined.Resize(int32_t(batch.frames), input->cols);
    float* dst = joined.data.data();
    for (const Window& w : batch.windows) {
      std::memcpy(dst, w.feats.data.data(), w.feats.data.size() * sizeof(float));
      dst += w.feats.data.size();
    }
    input = &joined;
  }
  const std::vector<std::shared_ptr<ModelEntry>>& models = batch.models->models;
  auto scores = std::make_shared<std::vector<Matrix>>(models.size());
  absl::Status status;
  for (size_t k = 0; k < models.size() && status.ok(); ++k) {
    status = models[k]->scorer(0).Score(*input, &(*scores)[k]);
  }
  metrics_->compute_seconds.Observe(std::chrono::duration<double>(Clock::now() - start).count());
  done();  // the scores now belong to the delivery
  if (!status.ok()) {
    DeliverFailure(std::move(batch), status, delivery_);
    return;
  }
  BatchScores view;
  view.states = models.front()->num_states();
  for (const Matrix& m : *scores) view.per_model.push_back(m.data.data());
  DeliverScores(std::move(batch), view, delivery_, [scores] {});
}

}  // namespace gmmscore::server

#include "kernels/cuda/cuda_fused_scorer.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/cpu_scorer.h"  // CheckFeatures

namespace gmmscore {

absl::StatusOr<std::unique_ptr<CudaFusedScorer>> CudaFusedScorer::Create(
    const std::vector<const GmmModel*>& models, FusionSpec spec, const CudaScorerOptions& options) {
  GMM_RETURN_IF_ERROR(ValidateFusion(&spec, models.size()));
  if (models.size() > size_t(kMaxFusedModels)) {
    return absl::InvalidArgumentError(
        absl::StrCat(models.size(), " models fused on the device, ", "at most ", kMaxFusedModels));
  }
  for (const GmmModel* m : models) {
    if (m->num_states() != models[0]->num_states() || m->dim() != models[0]->dim()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "fused models must have the same states and dimension: ", models[0]->num_states(), " x ",
          models[0]->dim(), " vs ", m->num_states(), " x ", m->dim()));
    }
  }
  std::unique_ptr<CudaFusedScorer> fused(new CudaFusedScorer());
  fused->spec_ = std::move(spec);
  WorkspaceCapacity capacity{options.max_frames, models[0]->dim(), models[0]->num_states(),
                             int32_t(models.size()), 0};
  for (const GmmModel* m : models) {
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<CudaScorer> scorer, CudaScorer::Create(*m, options));
    capacity.split_floats =
        std::max(capacity.split_floats, scorer->split_scratch_floats(options.max_frames));
    fused->models_.push_back(scorer.get());
    fused->scorers_.push_back(std::move(scorer));
  }
  GMM_ASSIGN_OR_RETURN(fused->workspace_,
                       CudaSetWorkspace::Create(options.device, options.poison_output));
  GMM_RETURN_IF_ERROR(fused->workspace_->Reserve(capacity));
  return fused;
}

std::string CudaFusedScorer::name() const {
  return absl::StrCat(scorers_[0]->name(), ", ", scorers_.size(),
                      " models fused on cuda:", device());
}

absl::Status CudaFusedScorer::Score(const Matrix& feats, Matrix* fused) const {
  return ScoreWithModelScores(feats, fused, nullptr);
}

absl::Status CudaFusedScorer::ScoreWithModelScores(const Matrix& feats, Matrix* fused,
                                                   std::vector<Matrix>* per_model) const {
  const int32_t dim = models_[0]->dim();
  const int32_t states = models_[0]->num_states();
  GMM_RETURN_IF_ERROR(CheckFeatures(feats, dim));
  fused->Resize(feats.rows, states);
  if (per_model != nullptr) per_model->assign(models_.size(), Matrix(feats.rows, states));
  std::lock_guard<std::mutex> lock(mutex_);
  workspace_->ResetSelect();  // a new utterance
  const int32_t max_frames = workspace_->capacity().frames;
  for (int32_t first = 0; first < feats.rows; first += max_frames) {
    const int32_t frames = std::min(max_frames, feats.rows - first);
    std::memcpy(workspace_->staged_feats(), feats.row(first),
                size_t(frames) * size_t(dim) * sizeof(float));
    const FusionSegment segment{frames, &spec_};
    GMM_RETURN_IF_ERROR(workspace_->Enqueue(models_, {&segment, 1}, frames, per_model != nullptr));
    GMM_RETURN_IF_ERROR(workspace_->Wait());
    const size_t floats = size_t(frames) * size_t(states);
    std::memcpy(fused->row(first), workspace_->fused(), floats * sizeof(float));
    if (per_model == nullptr) continue;
    for (size_t k = 0; k < models_.size(); ++k) {
      std::memcpy((*per_model)[k].row(first), workspace_->model_scores(int32_t(k)),
                  floats * sizeof(float));
    }
  }
  return absl::OkStatus();
}

}  // namespace gmmscore

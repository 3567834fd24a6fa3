#include "kernels/cuda/score/cuda_fused_scorer.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/common/cuda_device.h"
#include "model/shape_checks.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<std::unique_ptr<CudaFusedScorer>> CudaFusedScorer::Create(
    const std::vector<const GmmModel*>& models, FusionSpec spec, const CudaScorerOptions& options) {
  GMM_RETURN_IF_ERROR(ValidateFusion(&spec, models.size()));
  if (models.size() > size_t(kMaxFusedModels)) {
    return absl::InvalidArgumentError(
        absl::StrCat(models.size(), " models fused on the device, ", "at most ", kMaxFusedModels));
  }
  std::vector<ModelShape> shapes;
  for (const GmmModel* m : models) shapes.push_back({"", m->num_states(), m->dim()});
  GMM_RETURN_IF_ERROR(CheckSameShape(shapes));
  GMM_ASSIGN_OR_RETURN(const CudaScorerPlan plan, PlanCudaScorer(models, options));
  std::unique_ptr<CudaFusedScorer> fused(new CudaFusedScorer());
  fused->spec_ = std::move(spec);
  for (const CudaResidentModel::Layouts& planned : plan.layouts) {
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<CudaResidentModel> resident,
                         CudaResidentModel::Upload(planned, options.device));
    fused->models_.push_back(resident.get());
    fused->residents_.push_back(std::move(resident));
    fused->choosers_.push_back(
        std::make_unique<KernelChooser>(options.kernels, options.max_frames));
  }
  GMM_ASSIGN_OR_RETURN(fused->workspace_,
                       CudaWorkspace::Create(options.device, options.poison_output));
  GMM_RETURN_IF_ERROR(fused->workspace_->Reserve(plan.capacity));
  return fused;
}

std::string CudaFusedScorer::name() const {
  return absl::StrCat(choosers_[0]->name(), ", ", residents_.size(),
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
  std::vector<CudaKernelConfig> configs(models_.size());
  for (int32_t first = 0; first < feats.rows; first += max_frames) {
    const int32_t frames = std::min(max_frames, feats.rows - first);
    for (size_t k = 0; k < models_.size(); ++k) {
      GMM_ASSIGN_OR_RETURN(configs[k], choosers_[k]->ConfigFor(*models_[k], frames, *workspace_));
    }
    std::memcpy(workspace_->staged_feats(), feats.row(first),
                size_t(frames) * size_t(dim) * sizeof(float));
    const FusionSegment segment{frames, &spec_};
    GMM_RETURN_IF_ERROR(
        workspace_->Enqueue(models_, configs, {&segment, 1}, frames, per_model != nullptr));
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

#include "kernels/cuda/score/cuda_scorer.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/common/cuda_device.h"
#include "model/shape_checks.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<CudaScorerPlan> PlanCudaScorer(std::span<const GmmModel* const> models,
                                              const CudaScorerOptions& options) {
  if (options.max_frames <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_frames must be positive, is ", options.max_frames));
  }
  CudaScorerPlan plan;
  plan.capacity = {options.max_frames, models[0]->dim(), models[0]->num_states(),
                   int32_t(models.size()), 0};
  int64_t model_bytes = 0;
  for (const GmmModel* m : models) {
    GMM_ASSIGN_OR_RETURN(CudaResidentModel::Layouts layouts,
                         CudaResidentModel::Plan(*m, options.kernels));
    plan.capacity.split_floats = std::max(
        plan.capacity.split_floats, SplitScratchFloats(options.max_frames, layouts.split_slots()));
    model_bytes += layouts.device_bytes();
    plan.layouts.push_back(std::move(layouts));
  }
  GMM_RETURN_IF_ERROR(SelectDevice(options.device));
  const int64_t buffer_bytes = CudaWorkspace::DeviceBytesFor(plan.capacity);
  GMM_RETURN_IF_ERROR(
      CheckDeviceRoom(options.device, model_bytes + buffer_bytes,
                      absl::StrCat(models.size() == 1 ? "the model (" : "the models (", model_bytes,
                                   " bytes) and buffers of ", options.max_frames, " frames (",
                                   buffer_bytes, " bytes) need"),
                      options.memory_budget_bytes));
  return plan;
}

absl::StatusOr<std::unique_ptr<CudaScorer>> CudaScorer::Create(const GmmModel& model,
                                                               const CudaScorerOptions& options) {
  const GmmModel* one[] = {&model};
  GMM_ASSIGN_OR_RETURN(const CudaScorerPlan plan, PlanCudaScorer(one, options));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<CudaResidentModel> resident,
                       CudaResidentModel::Upload(plan.layouts[0], options.device));
  std::unique_ptr<CudaScorer> scorer(new CudaScorer(std::move(resident), options));
  GMM_ASSIGN_OR_RETURN(scorer->workspace_,
                       CudaWorkspace::Create(options.device, options.poison_output));
  GMM_RETURN_IF_ERROR(scorer->workspace_->Reserve(plan.capacity));
  return scorer;
}

absl::StatusOr<CudaKernelConfig> CudaScorer::ConfigFor(int32_t frames) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return chooser_.ConfigFor(*resident_, frames, *workspace_);
}

absl::Status CudaScorer::Score(const Matrix& feats, Matrix* out) const {
  GMM_RETURN_IF_ERROR(CheckFeatures(feats, dim()));
  out->Resize(feats.rows, num_states());
  std::lock_guard<std::mutex> lock(mutex_);
  const int32_t max_frames = chooser_.max_frames();
  const CudaResidentModel* model = resident_.get();
  for (int32_t first = 0; first < feats.rows; first += max_frames) {
    const int32_t frames = std::min(max_frames, feats.rows - first);
    GMM_ASSIGN_OR_RETURN(const CudaKernelConfig config,
                         chooser_.ConfigFor(*resident_, frames, *workspace_));
    std::memcpy(workspace_->staged_feats(), feats.row(first),
                size_t(frames) * size_t(dim()) * sizeof(float));
    const FusionSegment whole{frames, nullptr};
    GMM_RETURN_IF_ERROR(workspace_->Enqueue({&model, 1}, {&config, 1}, {&whole, 1}, frames,
                                            /*copy_model_scores=*/false));
    // A fault inside the kernel surfaces here.
    GMM_RETURN_IF_ERROR(workspace_->Wait());
    std::memcpy(out->row(first), workspace_->fused(),
                size_t(frames) * size_t(num_states()) * sizeof(float));
  }
  return absl::OkStatus();
}

}  // namespace gmmscore

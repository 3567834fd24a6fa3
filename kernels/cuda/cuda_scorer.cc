#include "kernels/cuda/cuda_scorer.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/cuda_device.h"
#include "model/shape_checks.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<std::unique_ptr<CudaScorer>> CudaScorer::Create(const GmmModel& model,
                                                               const CudaScorerOptions& options) {
  if (options.max_frames <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_frames must be positive, is ", options.max_frames));
  }
  GMM_ASSIGN_OR_RETURN(const CudaResidentModel::Layouts layouts,
                       CudaResidentModel::Plan(model, options.kernels));
  GMM_RETURN_IF_ERROR(SelectDevice(options.device));
  const WorkspaceCapacity capacity{options.max_frames, model.dim(), model.num_states(), 1,
                                   SplitScratchFloats(options.max_frames, layouts.split_slots())};
  const int64_t model_bytes = layouts.device_bytes();
  const int64_t buffer_bytes = CudaWorkspace::DeviceBytesFor(capacity);
  GMM_RETURN_IF_ERROR(
      CheckDeviceRoom(options.device, model_bytes + buffer_bytes,
                      absl::StrCat("the model (", model_bytes, " bytes) and its buffers of ",
                                   options.max_frames, " frames (", buffer_bytes, " bytes) need"),
                      options.memory_budget_bytes));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<CudaResidentModel> resident,
                       CudaResidentModel::Upload(layouts, options.device));
  std::unique_ptr<CudaScorer> scorer(new CudaScorer(std::move(resident), options));
  GMM_ASSIGN_OR_RETURN(scorer->workspace_,
                       CudaWorkspace::Create(options.device, options.poison_output));
  GMM_RETURN_IF_ERROR(scorer->workspace_->Reserve(capacity));
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

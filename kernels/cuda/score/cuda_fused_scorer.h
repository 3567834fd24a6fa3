// Several models resident on one device, scored on one CUDA stream and fused there
// (cuda_workspace.h): only the fused scores are copied back, each model's only when asked.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cuda/score/cuda_resident_model.h"
#include "kernels/cuda/score/cuda_scorer.h"
#include "kernels/cuda/score/cuda_workspace.h"
#include "kernels/cuda/score/kernel_chooser.h"
#include "kernels/fused_scorer.h"

namespace gmmscore {

class CudaFusedScorer final : public FusedScorer {
 public:
  // Each model resident on options.device with a chooser of options.kernels, one workspace of
  // options.max_frames frames for all; fails as CudaScorer::Create does, or with InvalidArgument
  // for models of different states or dimensions, more than kMaxFusedModels, or a spec
  // ValidateFusion refuses.
  static absl::StatusOr<std::unique_ptr<CudaFusedScorer>> Create(
      const std::vector<const GmmModel*>& models, FusionSpec spec,
      const CudaScorerOptions& options = {});

  std::string name() const override;
  // Thread-safe; calls are serialised on the device.
  absl::Status Score(const Matrix& feats, Matrix* fused) const override;
  // Also copies back every model's scores (frames x states each) into per_model.
  absl::Status ScoreWithModelScores(const Matrix& feats, Matrix* fused,
                                    std::vector<Matrix>* per_model) const;

  int device() const { return workspace_->device(); }

 private:
  CudaFusedScorer() = default;

  std::vector<std::unique_ptr<CudaResidentModel>> residents_;
  std::vector<const CudaResidentModel*> models_;  // residents_, as the workspace takes them
  mutable std::vector<std::unique_ptr<KernelChooser>> choosers_;  // per model
  FusionSpec spec_;
  std::unique_ptr<CudaWorkspace> workspace_;
  mutable std::mutex mutex_;  // the workspace serves one call at a time
};

}  // namespace gmmscore

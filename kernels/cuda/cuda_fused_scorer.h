// Several models resident on one device, scored on one CUDA stream and fused there
// (cuda_set_workspace.h): only the fused scores are copied back, each model's only when asked.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cuda/cuda_scorer.h"
#include "kernels/cuda/cuda_set_workspace.h"
#include "kernels/fused_scorer.h"

namespace gmmscore {

class CudaFusedScorer final : public FusedScorer {
 public:
  // Each model resident as CudaScorer::Create makes it with options (device, frames per launch,
  // kernels), and fails as it does; or with InvalidArgument for models of different states or
  // dimensions, more than kMaxFusedModels, or a spec ValidateFusion refuses.
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

  std::vector<std::unique_ptr<CudaScorer>> scorers_;
  std::vector<const CudaScorer*> models_;  // scorers_, as the workspace takes them
  FusionSpec spec_;
  std::unique_ptr<CudaSetWorkspace> workspace_;
  mutable std::mutex mutex_;  // the workspace serves one call at a time
};

}  // namespace gmmscore

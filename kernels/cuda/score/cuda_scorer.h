// The blocking one-model CUDA scorer behind `gmmscore score --backend cuda`: a thin Scorer over a
// resident model (cuda_resident_model.h), its kernel chooser (kernel_chooser.h) and one workspace
// (cuda_workspace.h). Each Score call copies frames in through the workspace's pinned staging,
// launches, and copies the scores back, max_frames frames at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cuda/score/cuda_resident_model.h"
#include "kernels/cuda/score/cuda_workspace.h"
#include "kernels/cuda/score/kernel_chooser.h"
#include "kernels/cuda/score/kernel_config.h"
#include "kernels/scorer.h"
#include "model/gmm_model.h"

namespace gmmscore {

struct CudaScorerOptions {
  int device = 0;
  // Frames per launch: the workspace holds this many; longer inputs take several launches.
  int32_t max_frames = 1024;
  // Device memory the scorer may take, in bytes; 0: whatever cudaMemGetInfo reports free.
  int64_t memory_budget_bytes = 0;
  // Fills the device's score buffer with NaN before every launch, so that a test sees any score
  // the kernel failed to write.
  bool poison_output = false;
  // The kernels the scorer chooses from: the mode's autotune per shape bucket, or one fixed
  // configuration. The tensor modes fail at Create for models the tensor kernel does not take;
  // kAuto then keeps to SIMT.
  CudaKernelChoice kernels;
};

// What the blocking scorers put on options.device before anything is allocated there: each
// model's layouts for options.kernels and a workspace of options.max_frames frames for them all.
// Fails as CudaScorer::Create does, ResourceExhausted naming the bytes where they do not fit.
struct CudaScorerPlan {
  std::vector<CudaResidentModel::Layouts> layouts;  // per model
  WorkspaceCapacity capacity;
};
absl::StatusOr<CudaScorerPlan> PlanCudaScorer(std::span<const GmmModel* const> models,
                                              const CudaScorerOptions& options);

class CudaScorer final : public Scorer {
 public:
  // Fails with Unavailable when there is no such CUDA device, with ResourceExhausted (the bytes
  // needed and free named) when the model and its buffers do not fit in device memory, with
  // InvalidArgument for a tensor mode or configuration the model or the kernel cannot take.
  static absl::StatusOr<std::unique_ptr<CudaScorer>> Create(const GmmModel& model,
                                                            const CudaScorerOptions& options = {});

  int32_t dim() const override { return resident_->dim(); }
  int32_t num_states() const override { return resident_->num_states(); }
  std::string name() const override { return chooser_.name(); }
  // Thread-safe; calls are serialised on the workspace.
  absl::Status Score(const Matrix& feats, Matrix* out) const override;

  // The configuration launches of `frames` frames use (tuned now on the scorer's workspace if not
  // before), and the choice made so far.
  absl::StatusOr<CudaKernelConfig> ConfigFor(int32_t frames) const;
  std::optional<CudaKernelConfig> ChosenConfig(int32_t frames) const {
    return chooser_.ChosenConfig(frames);
  }
  const CudaResidentModel& resident() const { return *resident_; }
  int32_t max_frames() const { return chooser_.max_frames(); }

 private:
  CudaScorer(std::unique_ptr<CudaResidentModel> resident, const CudaScorerOptions& options)
      : resident_(std::move(resident)), chooser_(options.kernels, options.max_frames) {}

  std::unique_ptr<CudaResidentModel> resident_;
  std::unique_ptr<CudaWorkspace> workspace_;
  mutable KernelChooser chooser_;
  mutable std::mutex mutex_;  // the workspace serves one call at a time
};

}  // namespace gmmscore

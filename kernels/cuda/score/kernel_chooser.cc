#include "kernels/cuda/score/kernel_chooser.h"

#include <algorithm>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/common/cuda_status.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// Frames of the kind the kernels see (shifted features of MFCC-like spread), never zeros: the
// autotune times the kernels on these. The same seed every time, so that a shorter run of frames
// is the start of a longer one.
std::vector<float> SyntheticFrames(int32_t frames, const std::vector<float>& shift) {
  std::mt19937 rng(20261121);
  std::normal_distribution<float> normal(0.0f, 2.5f);
  std::vector<float> feats(size_t(frames) * shift.size());
  for (size_t i = 0; i < feats.size(); ++i) feats[i] = shift[i % shift.size()] + normal(rng);
  return feats;
}

}  // namespace

std::string KernelChooser::name() const {
  if (choice_.fixed) return "cuda-" + ToString(*choice_.fixed);
  switch (choice_.mode) {
    case CudaKernelMode::kAuto:
      return "cuda-auto";
    case CudaKernelMode::kSimt:
      return "cuda-simt";
    case CudaKernelMode::kTensor:
      return "cuda-tensor";
    case CudaKernelMode::kTensorFast:
      return "cuda-tensor-fast";
    case CudaKernelMode::kTensorTf32:
      return "cuda-tensor-tf32";
  }
  return "cuda";
}

absl::StatusOr<CudaKernelConfig> KernelChooser::ConfigFor(const CudaResidentModel& model,
                                                          int32_t frames, CudaWorkspace& scratch) {
  if (choice_.fixed) return *choice_.fixed;
  std::lock_guard<std::mutex> lock(mutex_);
  return TuneLocked(model, frames, choice_.mode, scratch);
}

absl::StatusOr<CudaKernelConfig> KernelChooser::Tune(const CudaResidentModel& model, int32_t frames,
                                                     CudaKernelMode mode, CudaWorkspace& scratch) {
  std::lock_guard<std::mutex> lock(mutex_);
  return TuneLocked(model, frames, mode, scratch);
}

absl::Status KernelChooser::ChooseForEveryBucket(const CudaResidentModel& model,
                                                 CudaWorkspace& scratch) {
  for (int32_t frames = 1; frames < max_frames_; frames *= 2) {
    GMM_RETURN_IF_ERROR(ConfigFor(model, frames, scratch).status());
  }
  return ConfigFor(model, max_frames_, scratch).status();
}

std::optional<CudaKernelConfig> KernelChooser::ChosenConfig(int32_t frames) const {
  if (choice_.fixed) return choice_.fixed;
  std::lock_guard<std::mutex> lock(mutex_);
  return chosen_[int(choice_.mode)][ShapeBucket(frames)];
}

absl::StatusOr<CudaKernelConfig> KernelChooser::TuneLocked(const CudaResidentModel& model,
                                                           int32_t frames, CudaKernelMode mode,
                                                           CudaWorkspace& scratch) {
  if (frames < 1 || frames > max_frames_) {
    return absl::InvalidArgumentError(
        absl::StrCat("no kernel choice for ", frames, " frames, at most ", max_frames_));
  }
  if (mode != CudaKernelMode::kSimt && mode != CudaKernelMode::kAuto &&
      !model.HasKind(TensorKindOf(mode))) {
    return absl::FailedPreconditionError(
        absl::StrCat("this model has no ", KindName(TensorKindOf(mode)), " kernel or its rows"));
  }
  std::optional<CudaKernelConfig>& chosen = chosen_[int(mode)][ShapeBucket(frames)];
  if (chosen) return *chosen;
  // The bucket's largest launch that fits the buffers.
  const int32_t tune_frames =
      static_cast<int32_t>(std::min<int64_t>(max_frames_, int64_t(1) << ShapeBucket(frames)));
  const std::vector<CudaKernelConfig> candidates =
      AutotuneCandidates(mode, model.HasKind(TensorKindOf(mode)), tune_frames);
  if (candidates.size() == 1) return *(chosen = candidates.front());
  const WorkspaceCapacity& room = scratch.capacity();
  if (scratch.device() != model.device() || room.frames < tune_frames || room.dim < model.dim() ||
      room.states < model.num_states() ||
      room.split_floats < model.SplitScratchFloats(tune_frames)) {
    return absl::FailedPreconditionError(
        absl::StrCat("the autotune's workspace on cuda:", scratch.device(), " holds ", room.frames,
                     " frames of ", room.states, " states x ", room.dim, " dims, a launch of ",
                     tune_frames, " frames of ", model.num_states(), " x ", model.dim(),
                     " on cuda:", model.device(), " needs more"));
  }
  GMM_ASSIGN_OR_RETURN(const CudaWorkspace::Borrowed buffers, scratch.Borrow());
  GMM_CUDA_RETURN_IF_ERROR(cudaSetDevice(model.device()));
  const std::vector<float> feats = SyntheticFrames(tune_frames, model.shift());
  GMM_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(buffers.feats, feats.data(),
                                           feats.size() * sizeof(float), cudaMemcpyHostToDevice,
                                           buffers.stream));
  GMM_ASSIGN_OR_RETURN(chosen,
                       PickFastest(candidates, buffers.stream, [&](const CudaKernelConfig& config) {
                         return model.Launch(config, buffers.feats, tune_frames, buffers.scores,
                                             buffers.split_scratch, buffers.stream);
                       }));
  return *chosen;
}

}  // namespace gmmscore

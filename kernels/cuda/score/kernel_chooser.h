// Which kernel configuration a resident model's launches use, per batch shape: the fixed one, or
// the fastest of the mode's candidates (kernel_autotune.h), timed at the first launch of each
// shape bucket on synthetic frames in a borrowed workspace and remembered for the chooser's
// lifetime. One chooser per resident model; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "kernels/cuda/score/cuda_resident_model.h"
#include "kernels/cuda/score/cuda_workspace.h"
#include "kernels/cuda/score/kernel_autotune.h"
#include "kernels/cuda/score/kernel_config.h"

namespace gmmscore {

class KernelChooser {
 public:
  // Launches of at most max_frames frames: the autotune of a bucket times the bucket's largest
  // launch up to max_frames.
  KernelChooser(const CudaKernelChoice& choice, int32_t max_frames)
      : choice_(choice), max_frames_(max_frames) {}

  // "cuda-" and the kernel mode ("cuda-auto", "cuda-simt", "cuda-tensor", "cuda-tensor-fast",
  // "cuda-tensor-tf32"), or the fixed configuration.
  std::string name() const;
  int32_t max_frames() const { return max_frames_; }

  // The configuration launches of `frames` frames of `model` use: the fixed one, else the
  // autotune's choice for the shape bucket, made now (synchronously, on scratch's stream) if not
  // made before. scratch: a workspace of the model's device with no batch in flight, holding
  // max_frames frames of the model (its split scratch included).
  absl::StatusOr<CudaKernelConfig> ConfigFor(const CudaResidentModel& model, int32_t frames,
                                             CudaWorkspace& scratch);
  // The autotune's choice among the configurations of `mode` for the shape bucket, made now if
  // not made before; remembered per mode. Fails for a tensor mode whose kernel or rows the model
  // does not have.
  absl::StatusOr<CudaKernelConfig> Tune(const CudaResidentModel& model, int32_t frames,
                                        CudaKernelMode mode, CudaWorkspace& scratch);
  // ConfigFor every bucket up to max_frames, so that no launch waits for the autotune.
  absl::Status ChooseForEveryBucket(const CudaResidentModel& model, CudaWorkspace& scratch);
  // The choice made for the shape bucket of `frames` in the chooser's mode, if any yet.
  std::optional<CudaKernelConfig> ChosenConfig(int32_t frames) const;

 private:
  static constexpr int kModes = 5;  // CudaKernelMode values

  absl::StatusOr<CudaKernelConfig> TuneLocked(const CudaResidentModel& model, int32_t frames,
                                              CudaKernelMode mode, CudaWorkspace& scratch);

  const CudaKernelChoice choice_;
  const int32_t max_frames_;
  mutable std::mutex mutex_;
  std::array<std::array<std::optional<CudaKernelConfig>, kShapeBuckets>, kModes> chosen_;
};

}  // namespace gmmscore

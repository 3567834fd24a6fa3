// A model resident on one GPU, and nothing else: the SIMT layout (cuda_packed_model.h), the
// tensor-core rows where the kernels that may run need them (tensor_model_layout.h), and const
// launches of the kernels from and to device memory on a caller's stream. No buffers, no stream,
// no kernel choice: the workspace (cuda_workspace.h) holds the buffers, the chooser
// (kernel_chooser.h) the choice. Scoring, fusion, and the alignment and statistics kernels to come
// all launch against it.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/compute_device.h"
#include "kernels/cuda/score/cuda_packed_model.h"
#include "kernels/cuda/score/kernel_config.h"
#include "kernels/cuda/score/simt_kernel.h"
#include "kernels/cuda/score/tensor_kernel.h"
#include "kernels/cuda/score/tensor_model_layout.h"
#include "model/gmm_model.h"

namespace gmmscore {

// Which kernels may run: a mode whose autotune picks per batch shape, or one fixed configuration.
struct CudaKernelChoice {
  CudaKernelMode mode = CudaKernelMode::kAuto;
  // Skips the autotune: every launch uses this configuration (tests, reproducible runs).
  std::optional<CudaKernelConfig> fixed;
  // Keeps every tensor kind's rows resident, so that any kind can launch (benchmarks). Otherwise
  // only the rows of the kind the mode or the fixed configuration uses are built: the 3xTF32 rows
  // are twice the size of the 3xF16 ones.
  bool all_tensor_kinds = false;
  // Multiplies the guard's gamma (GuardGamma, kernel_config.h): 0 turns the guard off and a large
  // value (2^24) sends every score through the direct form, so that tests and benchmarks can
  // measure what the guard saves and costs. The outliers are scored either way.
  float guard_scale = 1.0f;
};

class CudaResidentModel final : public ResidentModel {
 public:
  // The layouts on the host, before anything is on a device: Plan, check the room, Upload.
  struct Layouts {
    CudaModelLayout simt;
    std::optional<TensorModelLayout> tensor;
    float guard_scale = 1.0f;  // CudaKernelChoice::guard_scale
    int64_t device_bytes() const;
    // Slots of the larger layout: the split launches of either kernel share one scratch.
    int64_t split_slots() const;
  };
  // Fails with InvalidArgument for a fixed configuration no kernel has, or a tensor mode or
  // configuration the tensor kernel cannot take for this model (the message says why).
  static absl::StatusOr<Layouts> Plan(const GmmModel& model, const CudaKernelChoice& choice);
  // Uploads to `device` (SelectDevice first). Fails with Unavailable for no such device.
  static absl::StatusOr<std::unique_ptr<CudaResidentModel>> Upload(const Layouts& layouts,
                                                                   int device);
  // Plan, the room checked (ResourceExhausted naming the device and the bytes), Upload.
  static absl::StatusOr<std::unique_ptr<CudaResidentModel>> Create(const GmmModel& model,
                                                                   const CudaKernelChoice& choice,
                                                                   int device);

  std::string_view backend() const override { return "cuda"; }
  int32_t num_states() const override { return packed_.view().num_states; }
  int32_t dim() const override { return packed_.view().dim; }
  int64_t bytes() const override;
  int device() const { return device_; }
  // The per-dimension shift of the layouts (model/expanded_form.h), on the host.
  const std::vector<float>& shift() const { return shift_; }

  // Whether launches of this kind can run here (SIMT always; a tensor kind where its rows are).
  bool HasKind(CudaKernelKind kind) const;
  // The kernels' resource reports.
  std::string KernelSummary() const;
  // States the guard kernel watches after a launch of this kind (score_guard_kernel.h).
  int32_t WatchedStates(CudaKernelKind kind) const {
    return static_cast<int32_t>(watched_[static_cast<size_t>(kind)].size());
  }
  // Device floats of split scratch a launch of `frames` frames needs.
  int64_t SplitScratchFloats(int32_t frames) const;

  // Scores `frames` frames of device_feats (frames x dim) into device_out (frames x num_states)
  // in `config`, then runs the guard kernel (score_guard_kernel.h), asynchronously on `stream`
  // (of this model's device), with split_scratch holding SplitScratchFloats(frames) floats.
  // Thread-safe: it reads only the resident model. Fails with FailedPrecondition for a kind whose
  // kernel or rows are not resident.
  absl::Status Launch(const CudaKernelConfig& config, const float* device_feats, int32_t frames,
                      float* device_out, float* split_scratch, cudaStream_t stream) const;

 private:
  CudaResidentModel() = default;

  int device_ = 0;
  std::vector<float> shift_;
  CudaPackedModel packed_;
  SimtKernel kernel_;
  std::optional<TensorPackedModel> tensor_packed_;
  std::optional<TensorKernel> tensor_kernel_;
  int64_t split_slots_ = 0;
  float guard_scale_ = 1.0f;
  // Per kernel kind (by the enum's value), the states the guard kernel watches at its gamma
  // (score_guard_kernel.h).
  static constexpr int kKinds = 4;
  std::array<DeviceArray<int32_t>, kKinds> watched_;
};

}  // namespace gmmscore

// The CUDA backend: the model resident on one device, scored by the fused SIMT kernel
// (cuda_packed_model.h) or the tensor-core kernel (tensor_model_layout.h), whichever a short
// autotune finds faster for the batch shape (kernel_autotune.h). Each Score call copies the frames
// in through pinned staging, launches the kernels and copies the scores back, on the scorer's own
// stream.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cuda/cuda_buffers.h"
#include "kernels/cuda/cuda_packed_model.h"
#include "kernels/cuda/kernel_autotune.h"
#include "kernels/cuda/kernel_config.h"
#include "kernels/cuda/simt_kernel.h"
#include "kernels/cuda/tensor_kernel.h"
#include "kernels/cuda/tensor_model_layout.h"
#include "kernels/model/gmm_model.h"
#include "kernels/scorer.h"

namespace gmmscore {

struct CudaScorerOptions {
  int device = 0;
  // Frames per launch: the device buffers hold this many; longer inputs take several launches.
  int32_t max_frames = 1024;
  // Device memory the scorer may take, in bytes; 0: whatever cudaMemGetInfo reports free.
  int64_t memory_budget_bytes = 0;
  // Fills the device's score buffer with NaN before every launch, so that a test sees any score
  // the kernel failed to write.
  bool poison_output = false;
  // The kernels the scorer chooses from. The choice (a kernel and its blocking, for kSimt its
  // split count) is made per shape bucket
  // (ShapeBucket: frames rounded up to a power of two) by timing the candidates on synthetic
  // frames at the bucket's first launch, and remembered for the scorer's lifetime. The tensor
  // modes fail at Create for models the tensor kernel does not take; kAuto then keeps to SIMT.
  CudaKernelMode kernel_mode = CudaKernelMode::kAuto;
  // Skips the autotune: every launch uses this configuration (tests, reproducible runs).
  std::optional<CudaKernelConfig> fixed_config;
  // Keeps every tensor kind's rows resident, so that Tune, Enqueue and LaunchOn take any kind
  // (benchmarks). Otherwise only the rows of the kind the mode or fixed configuration uses are
  // built: the 3xTF32 rows are twice the size of the 3xF16 ones.
  bool all_tensor_kinds = false;
};

class CudaScorer final : public Scorer {
 public:
  // Fails with Unavailable when there is no such CUDA device, with ResourceExhausted (the bytes
  // needed and free named) when the model and its buffers do not fit in device memory, with
  // InvalidArgument for a tensor mode or configuration the model or the kernel cannot take.
  static absl::StatusOr<std::unique_ptr<CudaScorer>> Create(const GmmModel& model,
                                                            const CudaScorerOptions& options = {});
  ~CudaScorer() override;

  int32_t dim() const override { return packed_.view().dim; }
  int32_t num_states() const override { return packed_.view().num_states; }
  // "cuda-" and the kernel mode ("cuda-auto", "cuda-simt", "cuda-tensor", "cuda-tensor-fast",
  // "cuda-tensor-tf32"), or the fixed configuration.
  std::string name() const override;
  // Thread-safe; calls are serialised on the scorer's stream.
  absl::Status Score(const Matrix& feats, Matrix* out) const override;

  // Score's device work for callers that hold pinned buffers (benchmarks, batching): copies
  // frames x dim features from host_feats, scores them and copies frames x num_states scores to
  // host_out, asynchronously on stream(). frames <= max_frames; features are not validated. The
  // first form uses ConfigFor(frames), the second the given configuration.
  absl::Status Enqueue(const float* host_feats, int32_t frames, float* host_out) const;
  absl::Status Enqueue(const CudaKernelConfig& config, const float* host_feats, int32_t frames,
                       float* host_out) const;
  // The kernels alone, from and to device memory (benchmarks), asynchronously on stream().
  absl::Status EnqueueDevice(const CudaKernelConfig& config, const float* device_feats,
                             int32_t frames, float* device_out) const;
  // The kernels alone on the caller's stream and split scratch (split_scratch_floats(frames)
  // floats of device memory), for callers with buffers of their own: several models scored on one
  // stream (cuda_set_workspace.h), batches in flight at once. Thread-safe: it reads only the
  // resident model. frames <= max_frames.
  absl::Status LaunchOn(const CudaKernelConfig& config, const float* device_feats, int32_t frames,
                        float* device_out, float* split_scratch, cudaStream_t stream) const;
  int64_t split_scratch_floats(int32_t frames) const;

  // The configuration launches of `frames` frames use: the fixed one, else the autotune's choice
  // for the shape bucket, made now (synchronously, on stream()) if not made before.
  absl::StatusOr<CudaKernelConfig> ConfigFor(int32_t frames) const;
  // The autotune's choice among the configurations of `mode` for the shape bucket, made now if
  // not made before; remembered per mode. Fails for a tensor mode whose kernel or rows the scorer
  // does not have.
  absl::StatusOr<CudaKernelConfig> Tune(int32_t frames, CudaKernelMode mode) const;
  // The choice made for the shape bucket of `frames` in the scorer's mode, if any yet.
  std::optional<CudaKernelConfig> ChosenConfig(int32_t frames) const;

  cudaStream_t stream() const { return stream_; }
  int device() const { return device_; }
  int32_t max_frames() const { return max_frames_; }
  bool has_tensor_kernel() const { return tensor_kernel_.has_value(); }
  // Whether launches of this kind can run here (SIMT always; a tensor kind where its rows are).
  bool HasKind(CudaKernelKind kind) const;
  // The kernels' resource reports.
  std::string KernelSummary() const;
  // Device memory held: the packed models plus the frame, score and split buffers.
  int64_t device_bytes() const;

 private:
  static constexpr int kModes = 5;  // CudaKernelMode values

  CudaScorer() = default;
  absl::StatusOr<CudaKernelConfig> ConfigForLocked(int32_t frames) const;
  absl::StatusOr<CudaKernelConfig> TuneLocked(int32_t frames, CudaKernelMode mode) const;
  absl::Status CheckConfig(const CudaKernelConfig& config, int32_t frames) const;
  absl::Status EnqueueLocked(const CudaKernelConfig& config, const float* host_feats,
                             int32_t frames, float* host_out) const;
  absl::Status Launch(const CudaKernelConfig& config, const float* device_feats, int32_t frames,
                      float* device_out) const;

  int device_ = 0;
  int32_t max_frames_ = 0;
  bool poison_output_ = false;
  CudaKernelMode mode_ = CudaKernelMode::kAuto;
  std::optional<CudaKernelConfig> fixed_config_;
  CudaPackedModel packed_;
  SimtKernel kernel_;
  std::optional<TensorPackedModel> tensor_packed_;
  std::optional<TensorKernel> tensor_kernel_;
  DeviceArray<float> device_feats_;   // [max_frames][dim]
  DeviceArray<float> device_scores_;  // [max_frames][num_states]
  DeviceArray<float> split_scratch_;  // [kMaxSplits][split frames][split_slots_]
  int64_t split_slots_ = 0;           // the larger of the two layouts' slot counts
  PinnedArray<float> pinned_feats_;
  PinnedArray<float> pinned_scores_;
  std::vector<float> tune_feats_;  // synthetic frames for the autotune, [max_frames][dim]
  cudaStream_t stream_ = nullptr;
  mutable std::mutex mutex_;  // the buffers above and the choices below are shared by all calls
  mutable std::array<std::array<std::optional<CudaKernelConfig>, kShapeBuckets>, kModes> chosen_;
};

}  // namespace gmmscore

// The CUDA backend: the model resident on one device in the layout of cuda_packed_model.h, scored
// by the fused SIMT kernel. Each Score call copies the frames in through pinned staging, launches
// the kernel and copies the scores back, on the scorer's own stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "kernels/cuda/cuda_buffers.h"
#include "kernels/cuda/cuda_packed_model.h"
#include "kernels/cuda/simt_kernel.h"
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
};

class CudaScorer final : public Scorer {
 public:
  // Fails with Unavailable when there is no such CUDA device, with ResourceExhausted (the bytes
  // needed and free named) when the model and its buffers do not fit in device memory.
  static absl::StatusOr<std::unique_ptr<CudaScorer>> Create(const GmmModel& model,
                                                            const CudaScorerOptions& options = {});
  ~CudaScorer() override;

  int32_t dim() const override { return packed_.view().dim; }
  int32_t num_states() const override { return packed_.view().num_states; }
  std::string name() const override { return "cuda-simt"; }
  // Thread-safe; calls are serialised on the scorer's stream.
  absl::Status Score(const Matrix& feats, Matrix* out) const override;

  // Score's device work for callers that hold pinned buffers (benchmarks, batching): copies
  // frames x dim features from host_feats, scores them and copies frames x num_states scores to
  // host_out, asynchronously on stream(). frames <= max_frames; features are not validated.
  absl::Status Enqueue(const float* host_feats, int32_t frames, float* host_out) const;

  cudaStream_t stream() const { return stream_; }
  int device() const { return device_; }
  int32_t max_frames() const { return max_frames_; }
  const CudaPackedModel& packed() const { return packed_; }
  const SimtKernel& kernel() const { return kernel_; }
  // Device memory held: the packed model plus the frame and score buffers.
  int64_t device_bytes() const;

 private:
  CudaScorer() = default;
  absl::Status EnqueueLocked(const float* host_feats, int32_t frames, float* host_out) const;

  int device_ = 0;
  int32_t max_frames_ = 0;
  bool poison_output_ = false;
  CudaPackedModel packed_;
  SimtKernel kernel_;
  DeviceArray<float> device_feats_;   // [max_frames][dim]
  DeviceArray<float> device_scores_;  // [max_frames][num_states]
  PinnedArray<float> pinned_feats_;
  PinnedArray<float> pinned_scores_;
  cudaStream_t stream_ = nullptr;
  mutable std::mutex mutex_;  // the buffers above are shared by all calls
};

}  // namespace gmmscore

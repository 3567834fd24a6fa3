// The GPU peer the CUDA kernels are measured against (docs/PERFORMANCE.md): the
// two-kernel path of Vaněk, Trmal, Psutka and Psutka, "Optimization of the Gaussian Mixture Model
// Evaluation on GPU", Interspeech 2011 section 3. A strict float32 cuBLAS SGEMM (default math mode:
// no TF32) of the expanded form [K, u, v] . [1, x', x'^2] writes the whole Gaussians x frames
// matrix, then a log-add kernel reduces it per state. Features and means are shifted by the
// per-dimension mean of means, as in the SIMT layout, so both paths have the same accuracy footing.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "kernels/cuda/common/cuda_buffers.h"
#include "model/gmm_model.h"

namespace gmmscore {

// Float32 FLOP/s of a large strict-float32 cuBLAS SGEMM (8192^3, default math mode: no TF32) on
// stream: the FP32 ceiling as a tuned library reaches it, median of 5 after a warm-up.
absl::StatusOr<double> MeasureSgemmFlops(cudaStream_t stream);

class CublasTwoKernel {
 public:
  static absl::StatusOr<std::unique_ptr<CublasTwoKernel>> Create(const GmmModel& model,
                                                                 int32_t max_frames);
  ~CublasTwoKernel();

  // Copies frames x dim features from pinned host_feats, scores them and copies frames x states
  // scores to pinned host_out, asynchronously on stream().
  absl::Status Enqueue(const float* host_feats, int32_t frames, float* host_out);
  // The device part alone: expansion, SGEMM and log-add, from and to device memory.
  absl::Status EnqueueDevice(const float* device_feats, int32_t frames, float* device_out);

  cudaStream_t stream() const { return stream_; }
  int64_t device_bytes() const;

 private:
  CublasTwoKernel() = default;

  int32_t dim_ = 0;
  int32_t num_states_ = 0;
  int64_t num_gauss_ = 0;
  int32_t max_frames_ = 0;
  DeviceArray<float> expanded_model_;   // column-major num_gauss x (2 dim + 1): K, u, v
  DeviceArray<uint32_t> gauss_begin_;   // [num_states + 1]
  DeviceArray<float> shift_;            // [dim]
  DeviceArray<float> feats_;            // [max_frames][dim]
  DeviceArray<float> expanded_frames_;  // column-major (2 dim + 1) x max_frames
  DeviceArray<float> gauss_scores_;     // column-major num_gauss x max_frames
  DeviceArray<float> scores_;           // [max_frames][num_states]
  cudaStream_t stream_ = nullptr;
  cublasHandle_t handle_ = nullptr;
};

}  // namespace gmmscore

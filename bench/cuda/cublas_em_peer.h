// The plain GPU E-step the fused statistics kernels are measured against (issue: "GEMM of the
// expanded form, a log-sum-exp pass, GEMMs for the statistics, float32"), as one would write it
// with cuBLAS: per chunk of frames, two strict-float32 SGEMMs give the Gaussians x frames matrix
// of u . x + v . x^2, a kernel adds the constants, takes each frame's log-sum-exp and turns the
// matrix into posteriors in place, and two SGEMMs and a GEMV add gamma^T x, gamma^T x^2 and the
// occupancies to float32 totals. The whole chunk's posterior matrix goes through device memory.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "kernels/cuda/common/cuda_buffers.h"
#include "model/gmm_model.h"
#include "model/gmm_stats.h"

namespace gmmscore {

class CublasEmPeer {
 public:
  // The Gaussians of pdf 0 of model; chunks of at most chunk_frames frames.
  static absl::StatusOr<std::unique_ptr<CublasEmPeer>> Create(const GmmModel& model,
                                                              int32_t chunk_frames);
  ~CublasEmPeer();

  // Adds the statistics of num_frames device-resident frames (row-major), chunk by chunk, on
  // stream().
  absl::Status Accumulate(const float* device_frames, int64_t num_frames);
  // Waits, and adds the float32 totals to stats (pdf 0) in double; zeroes them.
  absl::Status AddTo(GmmStats* stats);
  cudaStream_t stream() const { return stream_; }

 private:
  CublasEmPeer() = default;
  int32_t dim_ = 0, num_gauss_ = 0, chunk_frames_ = 0;
  DeviceArray<float> u_, v_, k_;  // column-major dim x num_gauss, and [num_gauss]
  DeviceArray<float> squares_;    // the chunk's x^2, column-major dim x chunk
  DeviceArray<float> matrix_;     // column-major num_gauss x chunk: scores, then posteriors
  DeviceArray<float> ones_;       // [chunk]
  DeviceArray<float> occ_, first_, second_;  // [num_gauss], dim x num_gauss (twice)
  DeviceArray<double> total_log_like_;
  int64_t frames_ = 0;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t handle_ = nullptr;
};

}  // namespace gmmscore

// EM statistics of one diagonal GMM on one GPU: the Gaussians of one pdf of a model (all of them
// for a UBM) resident on the device, on the tensor cores (em_tensor_kernel.h) where they keep
// float32 accuracy there and on the exact kernels (em_stats_kernel.h) otherwise
// (em_tensor_layout.h says which), frames either resident too or streamed
// from host memory in chunks, the copy of the next chunk (on its own stream) overlapped with the
// kernels of this one. The sums stay on the device, in double, until AddTo turns them into the
// model/gmm_stats.h statistics of the host; sums from several devices or machines simply add.
//
// Streaming runs at the copy engine's speed only from page-locked memory: pin the caller's frames
// with PinnedHostRange for as long as they are streamed.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "kernels/cuda/common/cuda_buffers.h"
#include "kernels/gmm_statistics_device.h"
#include "model/gmm_model.h"
#include "model/gmm_stats.h"

namespace gmmscore {

// Page-locks [data, data + bytes) for the object's lifetime (cudaHostRegister).
class PinnedHostRange {
 public:
  static absl::StatusOr<std::unique_ptr<PinnedHostRange>> Create(const void* data, size_t bytes);
  ~PinnedHostRange();

 private:
  explicit PinnedHostRange(void* data) : data_(data) {}
  void* data_;
};

class CudaGmmStatistics : public GmmStatisticsDevice {
 public:
  struct Options {
    int device = 0;
    int32_t chunk_frames = 1 << 18;  // frames a streamed copy brings (and its launches cover)
    // Frames a launch covers when they are resident: one launch's ramp and tail instead of one a
    // chunk's (measured in docs/PERFORMANCE.md, "EM statistics"); costs 12 bytes a frame.
    int32_t resident_launch_frames = 1 << 22;
    bool tensor_cores = true;  // false: every Gaussian on the exact kernels
  };

  // The Gaussians of `pdf` (0 for a single GMM) uploaded to options.device.
  static absl::StatusOr<std::unique_ptr<CudaGmmStatistics>> Create(const GmmModel& model,
                                                                   int32_t pdf,
                                                                   const Options& options);
  ~CudaGmmStatistics() override;
  CudaGmmStatistics(const CudaGmmStatistics&) = delete;

  // Replaces the GMM (an EM iteration's new parameters; the number of Gaussians may change),
  // keeping the resident frames. The sums must have been taken (AddTo) first.
  absl::Status SetModel(const GmmModel& model, int32_t pdf) override;
  CudaGmmStatistics& operator=(const CudaGmmStatistics&) = delete;

  // Adds the statistics of `num_frames` frames (host, row-major, the model's dimension): chunk
  // after chunk, copies overlapped with compute. Returns once everything is queued; Synchronize
  // (or AddTo) waits.
  absl::Status AccumulateHost(const float* frames, int64_t num_frames) override;
  // Keeps `num_frames` frames on the device (replacing any kept before) ...
  absl::Status UploadFrames(const float* frames, int64_t num_frames) override;
  // ... and adds their statistics.
  absl::Status AccumulateResident() override;

  absl::Status Synchronize();
  // Waits, adds the device's sums to stats (the pdf's Gaussians; total log-likelihood and frames)
  // in double and zeroes them on the device.
  absl::Status AddTo(GmmStats* stats) override;
  std::string label() const override;

  int device() const { return device_; }
  // Where the kernels run (streamed copies wait on their own stream): for timing with events.
  cudaStream_t stream() const { return compute_; }
  int64_t frames_accumulated() const { return frames_; }
  // How many of the pdf's Gaussians the tensor cores take (the rest: the exact kernels).
  int32_t tensor_gaussians() const { return tensor_gauss_; }

 private:
  CudaGmmStatistics() = default;
  absl::Status Launch(const float* device_frames, int32_t num_frames);

  int device_ = 0;
  int32_t pdf_ = 0;
  int32_t dim_ = 0;
  int32_t num_gauss_ = 0;  // the pdf's
  int32_t chunk_frames_ = 0;
  int32_t resident_launch_frames_ = 0;
  int32_t launch_capacity_ = 0;  // the most frames a launch covers: the larger of the two
  int sms_ = 1;
  bool tensor_cores_ = true;
  // The exact kernels' Gaussians (indices within the pdf), padded to a multiple of kEmGaussPad.
  std::vector<int32_t> exact_gauss_;
  std::vector<double> exact_means_;  // their means, the shift of their centred sums
  int32_t exact_padded_ = 0;
  int32_t exact_splits_ = 1;
  DeviceArray<float> mean_, inv_var_, log_norm_;
  // The tensor cores' Gaussians: slots (em_tensor_layout.h) and their blocks' shifts.
  std::vector<int32_t> slot_gauss_;
  std::vector<float> slot_shift_;  // [block][dim]
  int32_t tensor_gauss_ = 0;
  int32_t tensor_splits_ = 1;
  DeviceArray<uint4> params_, log_sum_records_;
  DeviceArray<float2> consts_;
  DeviceArray<float> shift_;
  DeviceArray<float> column_scale_;
  DeviceArray<float2> partial_;  // [log-sum slices][frames] (partial_capacity_ entries)
  size_t partial_capacity_ = 0;
  DeviceArray<float> exact_lse_;  // the exact kernels' log-sums, when both run
  // The sums in double, one allocation: the tensor slots' [slot][1 + 2 dim] (about their block's
  // shift), then the exact Gaussians' occ, s1, s2 (about their means), then the total
  // log-likelihood.
  DeviceArray<double> sums_;
  DeviceArray<float> chunk_[2];  // streamed frames
  DeviceArray<float> lse_;       // the frames' log-sums, natural log
  DeviceArray<float> lse_bits_;  // and in log2 units (the tensor statistics')
  DeviceArray<float> resident_;
  int64_t resident_frames_ = 0;
  int64_t frames_ = 0;
  cudaStream_t compute_ = nullptr, copy_ = nullptr;
  cudaEvent_t copied_[2] = {}, consumed_[2] = {};
};

}  // namespace gmmscore

// One device's share of the E-step of a single GMM (every frame against every Gaussian of one
// pdf: a UBM, a global GMM) over frames it keeps or streams: the backend-neutral face of
// kernels/cuda/em/cuda_gmm_statistics.h, which kernels/backend.h hands out per selected GPU. The
// CPU's E-step is train/accumulate.h's (GmmAccumulator::AccumulateFrames). Statistics of several
// devices add on the host.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "model/gmm_model.h"
#include "model/gmm_stats.h"

namespace gmmscore {

class GmmStatisticsDevice {
 public:
  virtual ~GmmStatisticsDevice() = default;

  // The GMM of `pdf` for what follows (a new iteration's parameters).
  virtual absl::Status SetModel(const GmmModel& model, int32_t pdf) = 0;
  // Keeps frames (num_frames x dim, row-major) on the device, replacing those kept before;
  // RESOURCE_EXHAUSTED where they do not fit (then stream them with AccumulateHost).
  virtual absl::Status UploadFrames(const float* frames, int64_t num_frames) = 0;
  virtual absl::Status AccumulateResident() = 0;
  // Streams frames from host memory (page-locked for full speed).
  virtual absl::Status AccumulateHost(const float* frames, int64_t num_frames) = 0;
  // Waits, adds the sums to stats and zeroes them on the device.
  virtual absl::Status AddTo(GmmStats* stats) = 0;
  // "cuda:0 (NVIDIA H100 ...)", for messages.
  virtual std::string label() const = 0;
};

}  // namespace gmmscore

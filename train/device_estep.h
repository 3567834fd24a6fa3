// The E-step of one diagonal GMM over a fixed set of frames, on the GPUs given (each keeps its
// share of the frames resident, or streams it where it does not fit; the shares' statistics are
// summed on the host) or, with no device, on the CPU's threads (train/accumulate.h). What
// gmm-global-init-from-feats' iterations (`gmmscore train-gmm`) run.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kernels/gmm_statistics_device.h"
#include "model/gmm_model.h"
#include "model/gmm_stats.h"
#include "util/matrix.h"

namespace gmmscore {

class DeviceEStep {
 public:
  // frames must outlive this. log hears of a device that streams its share.
  DeviceEStep(const Matrix& frames, std::vector<std::unique_ptr<GmmStatisticsDevice>> devices,
              int threads, std::function<void(const std::string&)> log);

  // Shares the frames out over the devices, uploading each share that fits.
  absl::Status Start();
  // The statistics of every frame under model, added to *stats.
  absl::Status Accumulate(const GmmModel& model, GmmStats* stats);

 private:
  struct Share {
    int64_t first, count;
    bool resident;
  };
  const Matrix& frames_;
  std::vector<std::unique_ptr<GmmStatisticsDevice>> devices_;
  std::vector<Share> shares_;
  int threads_;
  std::function<void(const std::string&)> log_;
};

}  // namespace gmmscore

#include "train/device_estep.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "train/accumulate.h"
#include "util/status_macros.h"

namespace gmmscore {

DeviceEStep::DeviceEStep(const Matrix& frames,
                         std::vector<std::unique_ptr<GmmStatisticsDevice>> devices, int threads,
                         std::function<void(const std::string&)> log)
    : frames_(frames), devices_(std::move(devices)), threads_(threads), log_(std::move(log)) {}

absl::Status DeviceEStep::Start() {
  const int64_t n = frames_.rows, per = (n + int64_t(devices_.size()) - 1) /
                                        std::max<int64_t>(1, int64_t(devices_.size()));
  for (size_t i = 0; i < devices_.size(); ++i) {
    const int64_t first = std::min(n, int64_t(i) * per), count = std::min(n, first + per) - first;
    shares_.push_back({first, count, true});
    absl::Status s = devices_[i]->UploadFrames(frames_.row(int32_t(first)), count);
    if (absl::IsResourceExhausted(s)) {
      log_(devices_[i]->label() + ": the frames do not fit, streaming them (" +
           std::string(s.message()) + ")");
      shares_.back().resident = false;
    } else if (!s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status DeviceEStep::Accumulate(const GmmModel& model, GmmStats* stats) {
  if (devices_.empty()) {
    return GmmAccumulator(model)
        .AccumulateFrames(0, frames_.data.data(), frames_.rows, threads_, stats)
        .status();
  }
  std::vector<absl::Status> status(devices_.size());
  std::vector<GmmStats> partial(devices_.size(), GmmStats::ForModel(model, kGmmAll));
  std::vector<std::thread> workers;
  for (size_t i = 0; i < devices_.size(); ++i) {
    workers.emplace_back([&, i] {
      GmmStatisticsDevice& device = *devices_[i];
      const Share& share = shares_[i];
      status[i] = device.SetModel(model, 0);
      if (status[i].ok()) {
        status[i] = share.resident
                        ? device.AccumulateResident()
                        : device.AccumulateHost(frames_.row(int32_t(share.first)), share.count);
      }
      if (status[i].ok()) status[i] = device.AddTo(&partial[i]);
    });
  }
  for (std::thread& w : workers) w.join();
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (!status[i].ok()) return status[i];
    GMM_RETURN_IF_ERROR(stats->Add(partial[i]));
  }
  return absl::OkStatus();
}

}  // namespace gmmscore

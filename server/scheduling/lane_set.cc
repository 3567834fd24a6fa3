#include "server/scheduling/lane_set.h"

#include <algorithm>
#include <thread>

#include "kernels/backend.h"
#include "util/status_macros.h"

namespace gmmscore::server {
namespace {

int32_t DeliveryThreads(const ServerConfig& config) {
  if (config.batcher.delivery_threads > 0) return config.batcher.delivery_threads;
  return std::max(2, int32_t(std::thread::hardware_concurrency() / 4));
}

// The frames one batch can hold: whole windows up to --max-batch-frames (or
// --catch-up-batch-frames; the larger default when it is 0, before the lanes are known), and at
// least one window.
int32_t MaxBatchFrames(const ServerConfig& config) {
  const int32_t batch = config.batcher.max_batch_frames > 0 ? config.batcher.max_batch_frames
                                                            : BatcherOptions::kGpuBatchFrames;
  return std::max({batch, config.batcher.catch_up_batch_frames, config.stream.max_window_frames});
}

}  // namespace

absl::StatusOr<std::unique_ptr<LaneSet>> LaneSet::Create(const ServerConfig& config,
                                                         Metrics* metrics) {
  std::unique_ptr<LaneSet> set(new LaneSet(DeliveryThreads(config)));
  const BackendRequest request{.backend = config.backend,
                               .devices = config.devices,
                               .program = "gmmscored",
                               .cpu_threads = config.scorer_threads};
  GMM_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<ComputeDevice>> devices,
                       MakeComputeDevices(request, config.batcher.workers, MaxBatchFrames(config)));
  for (std::unique_ptr<ComputeDevice>& device : devices) {
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<BatchViterbi> viterbi, device->MakeViterbi());
    if (viterbi != nullptr) set->viterbis_.push_back(std::move(viterbi));
    set->lanes_.push_back(std::make_unique<Lane>(std::move(device), metrics));
  }
  set->batcher_options_ = config.batcher;
  if (set->batcher_options_.max_batch_frames == 0) {
    const bool on_cpu = set->lanes_.empty() || set->lanes_.front()->device() == "cpu";
    set->batcher_options_.max_batch_frames =
        on_cpu ? BatcherOptions::kCpuBatchFrames : BatcherOptions::kGpuBatchFrames;
  }
  return set;
}

std::vector<BatchViterbi*> LaneSet::viterbis() const {
  std::vector<BatchViterbi*> out;
  for (const std::unique_ptr<BatchViterbi>& v : viterbis_) out.push_back(v.get());
  return out;
}

absl::StatusOr<std::vector<Residency>> LaneSet::MakeResidents(const GmmModel& model) {
  std::vector<Residency> residents;
  for (const std::unique_ptr<Lane>& lane : lanes_) {
    const size_t index = size_t(lane->residency_index());
    if (index == residents.size()) {
      GMM_ASSIGN_OR_RETURN(std::unique_ptr<ResidentModel> resident, lane->MakeResident(model));
      residents.push_back({std::move(resident), lane->device()});
    }
    GMM_RETURN_IF_ERROR(lane->Prepare(*residents[index].model));
  }
  return residents;
}

}  // namespace gmmscore::server

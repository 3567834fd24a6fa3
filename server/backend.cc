#include "server/backend.h"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/util/status_macros.h"
#include "server/cpu_lane.h"
#ifdef GMMSCORE_HAVE_CUDA
#include "kernels/cuda/cuda_device.h"
#include "server/cuda_lane.h"
#endif

namespace gmmscore::server {
namespace {

int32_t DeliveryThreads(const ServerConfig& config) {
  if (config.batcher.delivery_threads > 0) return config.batcher.delivery_threads;
  return std::max(2, int32_t(std::thread::hardware_concurrency() / 4));
}

// The frames one batch can hold: whole windows up to --max-batch-frames, and at least one window.
int32_t MaxBatchFrames(const ServerConfig& config) {
  return std::max(config.batcher.max_batch_frames, config.stream.max_window_frames);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> Backend::Create(const ServerConfig& config,
                                                         Metrics* metrics) {
  std::unique_ptr<Backend> backend(new Backend(DeliveryThreads(config)));
  if (config.backend == "cpu" && config.devices != "all") {
    return absl::InvalidArgumentError(
        absl::StrCat("--devices ", config.devices, " selects GPUs, --backend cpu uses none"));
  }
  if (config.backend == "cuda" || config.backend == "auto") {
#ifdef GMMSCORE_HAVE_CUDA
    absl::StatusOr<std::vector<int>> devices = SelectCudaDevices(config.devices);
    if (devices.ok()) {
      std::vector<std::string> labels;
      for (int device : *devices) {
        GMM_ASSIGN_OR_RETURN(
            std::unique_ptr<CudaLane> lane,
            CudaLane::Create(device, int32_t(backend->lanes_.size()), MaxBatchFrames(config),
                             &backend->delivery_, metrics));
        backend->lanes_.push_back(std::move(lane));
        labels.push_back(DeviceLabel(device));
      }
      std::fprintf(stderr, "gmmscored: --backend %s: scoring on %s\n", config.backend.c_str(),
                   absl::StrJoin(labels, ", ").c_str());
      return backend;
    }
    if (config.backend == "cuda") {
      return absl::Status(devices.status().code(),
                          absl::StrCat("--backend cuda: ", devices.status().message()));
    }
    std::fprintf(stderr, "gmmscored: --backend auto: CUDA not usable (%s), scoring on the cpu\n",
                 std::string(devices.status().message()).c_str());
#else
    if (config.backend == "cuda") {
      return absl::UnimplementedError(
          "--backend cuda: this build has no CUDA (nvcc was not found)");
    }
    std::fprintf(stderr, "gmmscored: --backend auto: no CUDA in this build, scoring on the cpu\n");
#endif
  }
  for (int32_t i = 0; i < config.batcher.workers; ++i) {
    backend->lanes_.push_back(
        std::make_unique<CpuLane>(config.scorer_threads, &backend->delivery_, metrics));
  }
  return backend;
}

absl::StatusOr<std::vector<ResidentScorer>> Backend::MakeScorers(const GmmModel& model) {
  std::vector<ResidentScorer> scorers;
  for (const std::unique_ptr<ScoringLane>& lane : lanes_) {
    if (size_t(lane->scorer_index()) < scorers.size()) continue;  // shared with an earlier lane
    GMM_ASSIGN_OR_RETURN(ResidentScorer scorer, lane->MakeScorer(model));
    scorers.push_back(std::move(scorer));
  }
  return scorers;
}

}  // namespace gmmscore::server

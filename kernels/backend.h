// The one place that chooses where scoring runs, from --backend (cpu, cuda, or auto: CUDA when a
// GPU is usable, else the CPU) and --devices ("all" or a list of CUDA ordinals "0,1"), and says on
// stderr what it chose and, falling back to the CPU, why. The daemon gets compute devices for its
// lanes, the offline tools blocking scorers. The only code outside kernels/cuda that knows whether
// this build has CUDA.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/batch_aligner.h"
#include "kernels/compute_device.h"
#include "kernels/fused_scorer.h"
#include "kernels/gmm_statistics_device.h"
#include "model/fusion.h"
#include "model/gmm_model.h"

namespace gmmscore {

struct BackendRequest {
  std::string backend = "auto";  // --backend: cpu, cuda, auto
  std::string devices = "all";   // --devices: all, or CUDA ordinals "0,1"
  std::string program;           // prefixes the line that says the choice: "gmmscored"
  int32_t cpu_threads = 0;       // threads per CPU scoring call; <= 0: all hardware threads
};

// The daemon's devices: a CudaComputeDevice per selected GPU (residency index = its position), or
// cpu_workers CpuComputeDevices sharing residency index 0; batches of at most max_batch_frames.
// Errors name the flag.
absl::StatusOr<std::vector<std::unique_ptr<ComputeDevice>>> MakeComputeDevices(
    const BackendRequest& request, int32_t cpu_workers, int32_t max_batch_frames);

// The offline tools' scorers: one per selected GPU, or one on the CPU, each scoring every model
// (same states and dimension) and, for several, fusing them by spec (on the device with CUDA;
// spec validated). With --backend auto a GPU that cannot take the models falls back to the CPU.
absl::StatusOr<std::vector<std::unique_ptr<FusedScorer>>> MakeFusedScorers(
    const BackendRequest& request, const std::vector<GmmModel>& models, const FusionSpec& spec);

// What `gmmscore align` runs on: where a GPU is chosen, the model resident there, scored and
// aligned in batches on it (aligner); else a CPU scorer for the CPU aligner (scorer). model must
// outlive it.
struct AlignBackend {
  std::unique_ptr<FusedScorer> scorer;
  std::unique_ptr<BatchAligner> aligner;
};
absl::StatusOr<AlignBackend> MakeAlignBackend(const BackendRequest& request, const GmmModel& model);

// What the E-step of a single GMM (pdf of model) runs on: a GmmStatisticsDevice per selected GPU,
// or none, meaning the CPU (--backend cpu, or auto without a usable GPU).
absl::StatusOr<std::vector<std::unique_ptr<GmmStatisticsDevice>>> MakeGmmStatisticsDevices(
    const BackendRequest& request, const GmmModel& model, int32_t pdf);

}  // namespace gmmscore

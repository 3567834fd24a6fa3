#include "kernels/backend.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/cpu/cpu_compute_device.h"
#include "kernels/cpu/cpu_scorer.h"
#include "util/status_macros.h"
#ifdef GMMSCORE_HAVE_CUDA
#include "kernels/cuda/cuda_compute_device.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_fused_scorer.h"
#include "kernels/cuda/cuda_scorer.h"
#endif

namespace gmmscore {
namespace {

void Say(const BackendRequest& r, const std::string& what) {
  std::fprintf(stderr, "%s: --backend %s: %s\n", r.program.c_str(), r.backend.c_str(),
               what.c_str());
}

// The GPUs the request selects, or none (the CPU): Unimplemented/the device error for --backend
// cuda without them; --backend auto falls back and says why.
absl::StatusOr<std::vector<int>> ChooseGpus(const BackendRequest& r) {
  if (r.backend != "cpu" && r.backend != "cuda" && r.backend != "auto") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown backend '", r.backend, "' (cpu, cuda, auto)"));
  }
  if (r.backend == "cpu") {
    if (r.devices != "all") {
      return absl::InvalidArgumentError(
          absl::StrCat("--devices ", r.devices, " selects GPUs, --backend cpu uses none"));
    }
    return std::vector<int>();
  }
#ifdef GMMSCORE_HAVE_CUDA
  absl::StatusOr<std::vector<int>> gpus = SelectCudaDevices(r.devices);
  if (gpus.ok()) return gpus;
  if (r.backend == "cuda") {
    return absl::Status(gpus.status().code(),
                        absl::StrCat("--backend cuda: ", gpus.status().message()));
  }
  Say(r, absl::StrCat("CUDA not usable (", gpus.status().message(), "), scoring on the cpu"));
#else
  if (r.backend == "cuda") {
    return absl::UnimplementedError("--backend cuda: this build has no CUDA (nvcc was not found)");
  }
  Say(r, "no CUDA in this build, scoring on the cpu");
#endif
  return std::vector<int>();
}

std::string Labels(const std::vector<int>& gpus) {
  std::vector<std::string> labels;
#ifdef GMMSCORE_HAVE_CUDA
  for (int gpu : gpus) labels.push_back(DeviceLabel(gpu));
#endif
  return absl::StrJoin(labels, ", ");
}

#ifdef GMMSCORE_HAVE_CUDA
// One GPU's scorer: a CudaScorer for one model, CudaFusedScorer for several.
absl::StatusOr<std::unique_ptr<FusedScorer>> MakeCudaScorer(const std::vector<GmmModel>& models,
                                                            const FusionSpec& spec, int gpu) {
  CudaScorerOptions options;
  options.device = gpu;
  if (models.size() == 1) {
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<CudaScorer> scorer,
                         CudaScorer::Create(models[0], options));
    std::vector<std::unique_ptr<Scorer>> one;
    one.push_back(std::move(scorer));
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<HostFusedScorer> fused,
                         HostFusedScorer::Create(std::move(one), spec));
    return std::unique_ptr<FusedScorer>(std::move(fused));
  }
  std::vector<const GmmModel*> pointers;
  for (const GmmModel& m : models) pointers.push_back(&m);
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<CudaFusedScorer> fused,
                       CudaFusedScorer::Create(pointers, spec, options));
  return std::unique_ptr<FusedScorer>(std::move(fused));
}
#endif

// One scorer per GPU of the list.
absl::StatusOr<std::vector<std::unique_ptr<FusedScorer>>> MakeGpuScorers(
    [[maybe_unused]] const std::vector<int>& gpus,
    [[maybe_unused]] const std::vector<GmmModel>& models, [[maybe_unused]] const FusionSpec& spec) {
  std::vector<std::unique_ptr<FusedScorer>> scorers;
#ifdef GMMSCORE_HAVE_CUDA
  for (int gpu : gpus) {
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<FusedScorer> scorer, MakeCudaScorer(models, spec, gpu));
    scorers.push_back(std::move(scorer));
  }
#endif
  return scorers;
}

}  // namespace

absl::StatusOr<std::vector<std::unique_ptr<ComputeDevice>>> MakeComputeDevices(
    const BackendRequest& request, int32_t cpu_workers, int32_t max_batch_frames) {
  GMM_ASSIGN_OR_RETURN(const std::vector<int> gpus, ChooseGpus(request));
  std::vector<std::unique_ptr<ComputeDevice>> devices;
#ifdef GMMSCORE_HAVE_CUDA
  for (int gpu : gpus) {
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<CudaComputeDevice> device,
                         CudaComputeDevice::Create(gpu, int32_t(devices.size()), max_batch_frames));
    devices.push_back(std::move(device));
  }
  if (!devices.empty()) {
    Say(request, absl::StrCat("scoring on ", Labels(gpus)));
    return devices;
  }
#endif
  for (int32_t i = 0; i < cpu_workers; ++i) {
    devices.push_back(std::make_unique<CpuComputeDevice>(request.cpu_threads, max_batch_frames));
  }
  return devices;
}

absl::StatusOr<std::vector<std::unique_ptr<FusedScorer>>> MakeFusedScorers(
    const BackendRequest& request, const std::vector<GmmModel>& models, const FusionSpec& spec) {
  GMM_ASSIGN_OR_RETURN(const std::vector<int> gpus, ChooseGpus(request));
  if (!gpus.empty()) {
    absl::StatusOr<std::vector<std::unique_ptr<FusedScorer>>> gpu_scorers =
        MakeGpuScorers(gpus, models, spec);
    if (gpu_scorers.ok()) {
      Say(request, absl::StrCat("scoring on ", Labels(gpus)));
      return gpu_scorers;
    }
    if (request.backend == "cuda") return gpu_scorers.status();
    Say(request,
        absl::StrCat("CUDA not usable (", gpu_scorers.status().message(), "), scoring on the cpu"));
  }
  std::vector<std::unique_ptr<Scorer>> cpu;
  for (const GmmModel& m : models) {
    cpu.push_back(std::make_unique<CpuScorer>(m, request.cpu_threads));
  }
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<HostFusedScorer> fused,
                       HostFusedScorer::Create(std::move(cpu), spec));
  std::vector<std::unique_ptr<FusedScorer>> scorers;
  scorers.push_back(std::move(fused));
  return scorers;
}

}  // namespace gmmscore

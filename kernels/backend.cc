#include "kernels/backend.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/cpu/cpu_compute_device.h"
#include "kernels/cpu/cpu_scorer.h"
#include "util/status_macros.h"
#ifdef GMMSCORE_HAVE_CUDA
#include "kernels/cuda/align/cuda_aligner.h"
#include "kernels/cuda/common/cuda_device.h"
#include "kernels/cuda/cuda_compute_device.h"
#include "kernels/cuda/em/cuda_gmm_statistics.h"
#include "kernels/cuda/score/cuda_fused_scorer.h"
#include "kernels/cuda/score/cuda_scorer.h"
#endif

namespace gmmscore {
namespace {

// The GPU side, with and without CUDA in the build: the GPUs --devices names, their labels, and a
// device or a scorer on each.
#ifdef GMMSCORE_HAVE_CUDA
absl::StatusOr<std::vector<int>> SelectGpus(const std::string& devices) {
  return SelectCudaDevices(devices);
}

std::string GpuLabels(const std::vector<int>& gpus) {
  std::vector<std::string> labels;
  for (int gpu : gpus) labels.push_back(DeviceLabel(gpu));
  return absl::StrJoin(labels, ", ");
}

absl::StatusOr<std::unique_ptr<ComputeDevice>> MakeGpuDevice(int gpu, int32_t index,
                                                             int32_t max_frames) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<CudaComputeDevice> device,
                       CudaComputeDevice::Create(gpu, index, max_frames));
  return std::unique_ptr<ComputeDevice>(std::move(device));
}

// A CudaScorer for one model, CudaFusedScorer for several.
absl::StatusOr<std::unique_ptr<FusedScorer>> MakeGpuScorer(const std::vector<GmmModel>& models,
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

absl::StatusOr<std::unique_ptr<BatchAligner>> MakeGpuAligner(const GmmModel& model, int gpu) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<CudaAligner> aligner, CudaAligner::Create(model, gpu));
  return std::unique_ptr<BatchAligner>(std::move(aligner));
}

absl::StatusOr<std::unique_ptr<GmmStatisticsDevice>> MakeGpuStatistics(const GmmModel& model,
                                                                       int32_t pdf, int gpu) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<CudaGmmStatistics> stats,
                       CudaGmmStatistics::Create(model, pdf, {.device = gpu}));
  return std::unique_ptr<GmmStatisticsDevice>(std::move(stats));
}
#else
absl::StatusOr<std::vector<int>> SelectGpus(const std::string&) {
  return absl::UnimplementedError("this build has no CUDA (nvcc was not found)");
}

std::string GpuLabels(const std::vector<int>&) { return ""; }

absl::StatusOr<std::unique_ptr<ComputeDevice>> MakeGpuDevice(int, int32_t, int32_t) {
  return absl::UnimplementedError("this build has no CUDA");
}

absl::StatusOr<std::unique_ptr<FusedScorer>> MakeGpuScorer(const std::vector<GmmModel>&,
                                                           const FusionSpec&, int) {
  return absl::UnimplementedError("this build has no CUDA");
}

absl::StatusOr<std::unique_ptr<BatchAligner>> MakeGpuAligner(const GmmModel&, int) {
  return absl::UnimplementedError("this build has no CUDA");
}

absl::StatusOr<std::unique_ptr<GmmStatisticsDevice>> MakeGpuStatistics(const GmmModel&, int32_t,
                                                                       int) {
  return absl::UnimplementedError("this build has no CUDA");
}
#endif

void Say(const BackendRequest& r, const std::string& what) {
  std::fprintf(stderr, "%s: --backend %s: %s\n", r.program.c_str(), r.backend.c_str(),
               what.c_str());
}

// The GPUs the request selects, or none (the CPU): --backend cuda fails without them, naming the
// flag; --backend auto falls back to the CPU and says why.
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
  absl::StatusOr<std::vector<int>> gpus = SelectGpus(r.devices);
  if (gpus.ok()) return gpus;
  if (r.backend == "cuda") {
    return absl::Status(gpus.status().code(),
                        absl::StrCat("--backend cuda: ", gpus.status().message()));
  }
  Say(r, absl::StrCat("CUDA not usable (", gpus.status().message(), "), scoring on the cpu"));
  return std::vector<int>();
}

}  // namespace

absl::StatusOr<std::vector<std::unique_ptr<ComputeDevice>>> MakeComputeDevices(
    const BackendRequest& request, int32_t cpu_workers, int32_t max_batch_frames) {
  GMM_ASSIGN_OR_RETURN(const std::vector<int> gpus, ChooseGpus(request));
  std::vector<std::unique_ptr<ComputeDevice>> devices;
  for (int gpu : gpus) {
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<ComputeDevice> device,
                         MakeGpuDevice(gpu, int32_t(devices.size()), max_batch_frames));
    devices.push_back(std::move(device));
  }
  if (!gpus.empty()) {
    Say(request, absl::StrCat("scoring on ", GpuLabels(gpus)));
    return devices;
  }
  for (int32_t i = 0; i < cpu_workers; ++i) {
    devices.push_back(std::make_unique<CpuComputeDevice>(request.cpu_threads, max_batch_frames));
  }
  return devices;
}

absl::StatusOr<std::vector<std::unique_ptr<FusedScorer>>> MakeFusedScorers(
    const BackendRequest& request, const std::vector<GmmModel>& models, const FusionSpec& spec) {
  GMM_ASSIGN_OR_RETURN(const std::vector<int> gpus, ChooseGpus(request));
  std::vector<std::unique_ptr<FusedScorer>> scorers;
  absl::Status gpu_status;
  for (int gpu : gpus) {
    absl::StatusOr<std::unique_ptr<FusedScorer>> scorer = MakeGpuScorer(models, spec, gpu);
    if (!scorer.ok()) {
      gpu_status = scorer.status();
      break;
    }
    scorers.push_back(*std::move(scorer));
  }
  if (!gpus.empty() && gpu_status.ok()) {
    Say(request, absl::StrCat("scoring on ", GpuLabels(gpus)));
    return scorers;
  }
  if (!gpu_status.ok()) {
    if (request.backend == "cuda") return gpu_status;
    Say(request, absl::StrCat("CUDA not usable (", gpu_status.message(), "), scoring on the cpu"));
  }
  std::vector<std::unique_ptr<Scorer>> cpu;
  for (const GmmModel& m : models) {
    cpu.push_back(std::make_unique<CpuScorer>(m, request.cpu_threads));
  }
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<HostFusedScorer> fused,
                       HostFusedScorer::Create(std::move(cpu), spec));
  scorers.clear();
  scorers.push_back(std::move(fused));
  return scorers;
}

absl::StatusOr<AlignBackend> MakeAlignBackend(const BackendRequest& request,
                                              const GmmModel& model) {
  GMM_ASSIGN_OR_RETURN(const std::vector<int> gpus, ChooseGpus(request));
  AlignBackend backend;
  if (!gpus.empty()) {
    // The first GPU scores and aligns.
    absl::StatusOr<std::unique_ptr<BatchAligner>> aligner = MakeGpuAligner(model, gpus[0]);
    if (aligner.ok()) {
      Say(request, absl::StrCat("scoring and aligning on ", GpuLabels({gpus[0]})));
      backend.aligner = *std::move(aligner);
      return backend;
    }
    if (request.backend == "cuda") return aligner.status();
    Say(request,
        absl::StrCat("CUDA not usable (", aligner.status().message(), "), scoring on the cpu"));
  }
  std::vector<std::unique_ptr<Scorer>> cpu;
  cpu.push_back(std::make_unique<CpuScorer>(model, request.cpu_threads));
  GMM_ASSIGN_OR_RETURN(backend.scorer, HostFusedScorer::Create(std::move(cpu), FusionSpec()));
  return backend;
}

absl::StatusOr<std::vector<std::unique_ptr<GmmStatisticsDevice>>> MakeGmmStatisticsDevices(
    const BackendRequest& request, const GmmModel& model, int32_t pdf) {
  GMM_ASSIGN_OR_RETURN(const std::vector<int> gpus, ChooseGpus(request));
  std::vector<std::unique_ptr<GmmStatisticsDevice>> devices;
  for (const int gpu : gpus) {
    absl::StatusOr<std::unique_ptr<GmmStatisticsDevice>> device =
        MakeGpuStatistics(model, pdf, gpu);
    if (!device.ok()) {
      if (request.backend == "cuda") return device.status();
      Say(request,
          absl::StrCat("CUDA not usable (", device.status().message(), "), statistics on the cpu"));
      return std::vector<std::unique_ptr<GmmStatisticsDevice>>{};
    }
    devices.push_back(*std::move(device));
  }
  if (!devices.empty()) Say(request, absl::StrCat("statistics on ", GpuLabels(gpus)));
  return devices;
}

}  // namespace gmmscore

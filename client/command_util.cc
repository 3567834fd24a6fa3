#include "client/command_util.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/cpu_scorer.h"
#include "kernels/util/status_macros.h"
#ifdef GMMSCORE_HAVE_CUDA
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_fused_scorer.h"
#include "kernels/cuda/cuda_scorer.h"
#endif

namespace gmmscore {

int ParseOrExit(Args& args, int argc, char** argv) {
  args.Add({"help", "", "print this help"});
  if (absl::Status s = args.Parse(argc, argv, 2); !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 2;
  }
  if (args.GetBool("help")) {
    std::fputs(args.Help().c_str(), stdout);
    return 0;
  }
  return -1;
}

int Fail(const std::string& command, const absl::Status& status) {
  std::fprintf(stderr, "gmmscore %s: %s\n", command.c_str(), std::string(status.message()).c_str());
  return 1;
}

namespace {

#ifdef GMMSCORE_HAVE_CUDA
// One device's scorer: a CudaScorer for one model, CudaFusedScorer for several.
absl::StatusOr<std::unique_ptr<FusedScorer>> MakeCudaScorer(const std::vector<GmmModel>& models,
                                                            const FusionSpec& spec, int device) {
  CudaScorerOptions options;
  options.device = device;
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

// One scorer per device of the list; *where names the devices.
absl::StatusOr<std::vector<std::unique_ptr<FusedScorer>>> MakeCudaScorers(
    const std::string& devices, const std::vector<GmmModel>& models, const FusionSpec& spec,
    std::string* where) {
  GMM_ASSIGN_OR_RETURN(const std::vector<int> ids, SelectCudaDevices(devices));
  std::vector<std::unique_ptr<FusedScorer>> scorers;
  for (int device : ids) {
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<FusedScorer> scorer, MakeCudaScorer(models, spec, device));
    scorers.push_back(std::move(scorer));
    absl::StrAppend(where, where->empty() ? "" : ", ", DeviceLabel(device));
  }
  return scorers;
}
#endif

}  // namespace

absl::StatusOr<std::vector<std::unique_ptr<FusedScorer>>> MakeScorers(
    const std::string& backend, const std::string& devices, const std::vector<GmmModel>& models,
    const FusionSpec& spec, int threads) {
  if (backend != "cpu" && backend != "cuda" && backend != "auto") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown backend '", backend, "' (cpu, cuda, auto)"));
  }
  if (backend == "cpu" && devices != "all") {
    return absl::InvalidArgumentError(
        absl::StrCat("--devices ", devices, " selects GPUs, --backend cpu uses none"));
  }
  if (backend == "cuda" || backend == "auto") {
#ifdef GMMSCORE_HAVE_CUDA
    std::string where;
    auto cuda = MakeCudaScorers(devices, models, spec, &where);
    if (cuda.ok()) {
      if (backend == "auto")
        std::fprintf(stderr, "gmmscore: backend auto: using %s\n", where.c_str());
      return cuda;
    }
    if (backend == "cuda") return cuda.status();
    std::fprintf(stderr, "gmmscore: backend auto: CUDA not usable (%s), using cpu\n",
                 std::string(cuda.status().message()).c_str());
#else
    if (backend == "cuda") {
      return absl::UnimplementedError(
          "--backend cuda: this build has no CUDA (nvcc was not found)");
    }
    std::fprintf(stderr, "gmmscore: backend auto: no CUDA in this build, using cpu\n");
#endif
  }
  std::vector<std::unique_ptr<Scorer>> cpu;
  for (const GmmModel& m : models) cpu.push_back(std::make_unique<CpuScorer>(m, threads));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<HostFusedScorer> fused,
                       HostFusedScorer::Create(std::move(cpu), spec));
  std::vector<std::unique_ptr<FusedScorer>> scorers;
  scorers.push_back(std::move(fused));
  return scorers;
}

}  // namespace gmmscore

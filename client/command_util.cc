#include "client/command_util.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/cpu_scorer.h"
#ifdef GMMSCORE_HAVE_CUDA
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

absl::StatusOr<std::unique_ptr<Scorer>> MakeScorer(const std::string& backend,
                                                   const GmmModel& model, int threads) {
  if (backend != "cpu" && backend != "cuda" && backend != "auto") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown backend '", backend, "' (cpu, cuda, auto)"));
  }
  if (backend == "cuda" || backend == "auto") {
#ifdef GMMSCORE_HAVE_CUDA
    auto cuda = CudaScorer::Create(model);
    if (cuda.ok()) {
      if (backend == "auto") {
        std::fprintf(stderr, "gmmscore: backend auto: using cuda (device %d)\n", (*cuda)->device());
      }
      return std::unique_ptr<Scorer>(*std::move(cuda));
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
  return std::unique_ptr<Scorer>(new CpuScorer(model, threads));
}

}  // namespace gmmscore

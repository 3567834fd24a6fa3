#include "client/command_util.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/cpu_scorer.h"

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
  if (backend == "cpu" || backend == "auto") {
    if (backend == "auto") {
      std::fprintf(stderr, "gmmscore: backend auto: no CUDA backend in this build, using cpu\n");
    }
    return std::unique_ptr<Scorer>(new CpuScorer(model, threads));
  }
  if (backend == "cuda") {
    return absl::UnimplementedError(
        "--backend cuda: this build has no CUDA scorer yet; use --backend cpu or auto");
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown backend '", backend, "' (cpu, cuda, auto)"));
}

}  // namespace gmmscore

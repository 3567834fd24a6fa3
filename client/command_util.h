// Helpers shared by the subcommands: option parsing with --help, error reporting, backends.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/args.h"
#include "kernels/fused_scorer.h"
#include "kernels/fusion.h"
#include "kernels/model/gmm_model.h"

namespace gmmscore {

// Parses argv[2..] into args. Returns an exit code to stop with (0 after --help, 2 on a usage
// error), or -1 to go on.
int ParseOrExit(Args& args, int argc, char** argv);

// Prints "gmmscore COMMAND: message" to stderr and returns exit code 1.
int Fail(const std::string& command, const absl::Status& status);

// The scorers --backend ("cpu", "cuda" or "auto": CUDA when a GPU is usable, else the CPU; says
// which on stderr) and --devices ("all" or "0,1": the GPUs) ask for: one per GPU, or one on the
// CPU, each scoring every model and, when there are several, fusing them by spec (on the device
// with CUDA). models all have the same states and dimension; spec is validated.
absl::StatusOr<std::vector<std::unique_ptr<FusedScorer>>> MakeScorers(
    const std::string& backend, const std::string& devices, const std::vector<GmmModel>& models,
    const FusionSpec& spec, int threads);

}  // namespace gmmscore

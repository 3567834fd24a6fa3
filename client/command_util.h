// Helpers shared by the subcommands: option parsing with --help, error reporting, backends.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "client/args.h"
#include "kernels/model/gmm_model.h"
#include "kernels/scorer.h"

namespace gmmscore {

// Parses argv[2..] into args. Returns an exit code to stop with (0 after --help, 2 on a usage
// error), or -1 to go on.
int ParseOrExit(Args& args, int argc, char** argv);

// Prints "gmmscore COMMAND: message" to stderr and returns exit code 1.
int Fail(const std::string& command, const absl::Status& status);

// Makes the scorer that --backend asks for: "cpu", "cuda" or "auto" (CUDA when a GPU is usable,
// else CPU; says which on stderr).
absl::StatusOr<std::unique_ptr<Scorer>> MakeScorer(const std::string& backend,
                                                   const GmmModel& model, int threads);

}  // namespace gmmscore

// Helpers shared by the subcommands: option parsing with --help, error reporting, fusion options.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/fusion.h"
#include "tools/args.h"

namespace gmmscore {

// Parses argv[2..] into args. Returns an exit code to stop with (0 after --help, 255 after an
// invalid option, as Kaldi's tools), or -1 to go on.
int ParseOrExit(Args& args, int argc, char** argv);

// A usage error as Kaldi's tools report one: the help on stderr, exit status 1.
int Usage(const Args& args);

// Prints "gmmscore COMMAND: message" (under a Kaldi tool's name, Kaldi's "ERROR (tool) message")
// to stderr and returns Kaldi's exit status for an error, 255.
int Fail(const std::string& command, const absl::Status& status);

// What --fusion, --weights and --select-window set.
struct FusionOptions {
  std::string rule = "max";  // FusionSpec's rule by name: its default, FusionRule::kMax
  std::string weights;       // W1,W2,...; empty: equal weights
  FusionSpec spec;           // --select-window is spec.select_window
};
// Those options, declared once for every command that fuses models, bound to *options.
void AddFusionOptions(Args& args, FusionOptions* options);
// The spec they describe (not yet checked against the number of models: ValidateFusion).
absl::StatusOr<FusionSpec> FusionFromOptions(const FusionOptions& options);

}  // namespace gmmscore

// What the subcommands share beyond cli/command_line.h: the fusion options.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/args.h"
#include "cli/command_line.h"
#include "model/fusion.h"

namespace gmmscore {

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

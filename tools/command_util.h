// What the subcommands share beyond cli/command_line.h: the GMM update and fusion options.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/args.h"
#include "cli/command_line.h"
#include "model/fusion.h"
#include "train/mle_update.h"

namespace gmmscore {

// gmm-est's GMM update options (--min-gaussian-weight, --min-gaussian-occupancy, --min-variance,
// --remove-low-count-gaussians), bound to *options, as Kaldi's MleDiagGmmOptions registers them.
void RegisterMleOptions(Args& args, MleOptions* options);

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

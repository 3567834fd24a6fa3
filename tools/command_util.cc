#include "tools/command_util.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "util/status_macros.h"

namespace gmmscore {

void AddFusionOptions(Args& args, FusionOptions* options) {
  args.Register("fusion", &options->rule, "with several models: max, log-linear, log-add or select")
      .Register("weights", &options->weights, "fusion weights, one per model (default equal)")
      .Register("select-window", &options->spec.select_window, "frames summed by the select rule");
}

absl::StatusOr<FusionSpec> FusionFromOptions(const FusionOptions& options) {
  FusionSpec spec = options.spec;
  GMM_ASSIGN_OR_RETURN(spec.rule, ParseFusionRule(options.rule));
  if (!options.weights.empty()) {
    for (const absl::string_view part : absl::StrSplit(options.weights, ',')) {
      float w = 0;
      if (!absl::SimpleAtof(part, &w)) {
        return absl::InvalidArgumentError(absl::StrCat("--weights: '", part, "' is not a number"));
      }
      spec.weights.push_back(w);
    }
  }
  return spec;
}

}  // namespace gmmscore

#include "tools/command_util.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "util/status_macros.h"

namespace gmmscore {

void RegisterMleOptions(Args& args, MleOptions* options) {
  args.Register("min-gaussian-weight", &options->min_gaussian_weight,
                "min Gaussian weight before we remove it")
      .Register("min-gaussian-occupancy", &options->min_gaussian_occupancy,
                "minimum occupancy to update a Gaussian")
      .Register("min-variance", &options->min_variance, "variance floor (absolute variance)")
      .Register("remove-low-count-gaussians", &options->remove_low_count_gaussians,
                "if true, remove Gaussians that fall below the floors");
}

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

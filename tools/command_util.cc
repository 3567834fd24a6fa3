#include "tools/command_util.h"

#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tools/invocation.h"
#include "util/status_macros.h"

namespace gmmscore {

int ParseOrExit(Args& args, int argc, char** argv) {
  if (absl::Status s = args.Parse(argc, argv, 2); !s.ok()) {
    return Fail(args.command(), s);
  }
  if (args.GetBool("help")) {
    std::fputs(args.Help().c_str(), stdout);
    return 0;
  }
  return -1;
}

int Usage(const Args& args) {
  std::fputs(args.Help().c_str(), stderr);
  return 1;
}

int Fail(const std::string& command, const absl::Status& status) {
  const std::string& kaldi = KaldiToolName();
  const std::string message(status.message());
  if (kaldi.empty()) {
    std::fprintf(stderr, "gmmscore %s: %s\n", command.c_str(), message.c_str());
  } else {
    std::fprintf(stderr, "ERROR (%s[gmmscore]) %s\n", kaldi.c_str(), message.c_str());
  }
  return kErrorExitStatus;
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

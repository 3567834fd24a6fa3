#include "cli/command_line.h"

#include <cstdio>

#include "cli/invocation.h"

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

}  // namespace gmmscore

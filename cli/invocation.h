// How this process was invoked: as `gmmscore COMMAND`, or under the name of a Kaldi tool that
// gmmscore implements (a link made by `gmmscore kaldi-links`). Under a Kaldi name the process is
// that tool: Kaldi's option parser (cli/args.h), its log and error prefixes, its exit statuses.
#pragma once

#include <string>

namespace gmmscore {

// Kaldi's exit status for an error (a KALDI_ERR caught in main returns -1).
inline constexpr int kErrorExitStatus = 255;

void SetKaldiToolName(std::string name);
// The Kaldi tool this process runs as ("gmm-est"), or empty under `gmmscore COMMAND`.
const std::string& KaldiToolName();

// Runs a command, turning an exception that escapes it into a message and Kaldi's error exit.
int RunGuarded(const std::string& command, int (*run)(int argc, char** argv), int argc,
               char** argv);

// --verbose (Kaldi's standard option): 0 unless raised; levels above 0 add detail to logs.
void SetVerboseLevel(int level);
int VerboseLevel();

}  // namespace gmmscore

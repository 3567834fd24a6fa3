// What every command-line program's main does with its options and errors, as Kaldi's tools do:
// parse (--help prints the options and stops), report a usage error, report an error and give
// the exit status. Shared by the tools (tools/) and the load generator (loadgen/).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "cli/args.h"

namespace gmmscore {

// Parses argv[2..] into args. Returns an exit code to stop with (0 after --help, 255 after an
// invalid option, as Kaldi's tools), or -1 to go on.
int ParseOrExit(Args& args, int argc, char** argv);

// A usage error as Kaldi's tools report one: the help on stderr, exit status 1.
int Usage(const Args& args);

// Prints "gmmscore COMMAND: message" (under a Kaldi tool's name, Kaldi's "ERROR (tool) message")
// to stderr and returns Kaldi's exit status for an error, 255.
int Fail(const std::string& command, const absl::Status& status);

}  // namespace gmmscore

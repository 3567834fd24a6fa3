// The Kaldi tools gmmscore implements, by Kaldi's name: run under one of these names (a link made
// by `gmmscore kaldi-links DIR` to gmmscore-kaldi, tools/kaldi_main.cc, or to gmmscore itself),
// the binary is that tool, so that Kaldi's recipes run with DIR first on PATH and no Kaldi binary.
#pragma once

#include <string>
#include <vector>

namespace gmmscore {

struct KaldiTool {
  const char* name;                   // Kaldi's name: "gmm-align-compiled"
  const char* command;                // the gmmscore subcommand that is that tool: "align"
  int (*run)(int argc, char** argv);  // the command, run as `PROGRAM COMMAND [implied] ARGS`
  std::vector<const char*> implied;   // options that make the subcommand that tool
};

const std::vector<KaldiTool>& KaldiTools();
// The tool named by a program path's last component, or nullptr.
const KaldiTool* FindKaldiTool(const std::string& program_path);

// Runs `tool` as the process invoked with argv (argv[0] the program, then the tool's arguments):
// Kaldi's log prefixes, its exit status on an error, an escaping exception included.
int RunKaldiTool(const KaldiTool& tool, int argc, char** argv);

// gmmscore kaldi-links [--list] DIR: makes DIR (if need be) and a link in it for every tool, to
// gmmscore-kaldi where it is beside this binary, else to this binary.
int RunKaldiLinks(int argc, char** argv);

}  // namespace gmmscore

// The Kaldi tools gmmscore implements, by Kaldi's name: run under one of these names (a link made
// by `gmmscore kaldi-links DIR`), the gmmscore binary is that tool, so that Kaldi's recipes run
// with DIR first on PATH and no Kaldi binary.
#pragma once

#include <string>
#include <vector>

namespace gmmscore {

struct KaldiTool {
  const char* name;                  // Kaldi's name: "gmm-align-compiled"
  const char* command;               // the gmmscore subcommand that is that tool: "align"
  std::vector<const char*> implied;  // options that make the subcommand that tool
};

const std::vector<KaldiTool>& KaldiTools();
// The tool named by a program path's last component, or nullptr.
const KaldiTool* FindKaldiTool(const std::string& program_path);

// gmmscore kaldi-links [--list] DIR: makes DIR (if need be) and a link in it for every tool.
int RunKaldiLinks(int argc, char** argv);

}  // namespace gmmscore

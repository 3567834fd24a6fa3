// gmmscore-kaldi: the Kaldi tools that gmmscore implements (tools/kaldi_tools.h), in a binary of
// their own. It links no gRPC, links its other libraries statically and loads OpenFst and
// libsndfile when a tool first needs them, so that a tool starts in a few milliseconds, as Kaldi's
// do: a recipe starts them thousands of times (docs/PERFORMANCE.md, "Start-up").
// `gmmscore kaldi-links DIR` fills DIR with links named as the tools, to this binary.
#include <cstdio>
#include <cstring>
#include <string>

#include "tools/kaldi_tools.h"

int main(int argc, char** argv) {
  // Run under a Kaldi tool's name: that tool.
  if (const gmmscore::KaldiTool* tool = gmmscore::FindKaldiTool(argv[0]); tool != nullptr) {
    return gmmscore::RunKaldiTool(*tool, argc, argv);
  }
  // gmmscore-kaldi TOOL ARGS: the tool named first.
  if (argc >= 2) {
    if (const gmmscore::KaldiTool* tool = gmmscore::FindKaldiTool(argv[1]); tool != nullptr) {
      return gmmscore::RunKaldiTool(*tool, argc - 1, argv + 1);
    }
  }
  const bool help =
      argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0);
  std::FILE* out = help ? stdout : stderr;
  if (argc >= 2 && !help) std::fprintf(out, "gmmscore-kaldi: no Kaldi tool '%s'\n\n", argv[1]);
  std::fputs(
      "usage: gmmscore-kaldi TOOL [arguments], or run under a tool's name (a link made by\n"
      "`gmmscore kaldi-links DIR`). The tools, with Kaldi's arguments and options:\n",
      out);
  for (const gmmscore::KaldiTool& tool : gmmscore::KaldiTools()) {
    std::fprintf(out, "  %s\n", tool.name);
  }
  return help ? 0 : 2;
}

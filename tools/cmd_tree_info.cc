// Kaldi's tree-info (run under that name): a tree's number of pdfs, context width and central
// position, one "name value" line each on stdout (steps/*.sh read num-pdfs from it).
#include <cstdio>

#include "formats/kaldi_tree.h"
#include "tools/command_util.h"
#include "tools/commands.h"

namespace gmmscore {

int RunTreeInfo(int argc, char** argv) {
  Args args("tree-info",
            "[options] <tree-in>\n"
            "Print information about decision tree (mainly the number of pdfs), to stdout\n"
            "e.g.: tree-info exp/tri1/tree");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  if (args.positional().size() != 1) return Usage(args);
  auto tree = ReadKaldiTreeFile(args.positional()[0]);
  if (!tree.ok()) return Fail("tree-info", tree.status());
  std::printf("num-pdfs %d\n", tree->NumPdfs());
  std::printf("context-width %d\n", tree->context_width());
  std::printf("central-position %d\n", tree->central_position());
  return 0;
}

}  // namespace gmmscore

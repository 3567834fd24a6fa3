// Kaldi's splice-feats (run under that name): each frame with its neighbours side by side
// (feat/splice.h), as train_lda_mllt.sh and an LDA+MLLT model's feature pipeline splice them.
#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "feat/splice.h"
#include "formats/matrix_table.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "splice-feats";

absl::Status Splice(const std::string& in, const std::string& out, int32_t left, int32_t right) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableReader> reader, MatrixTableReader::Open(in));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableWriter> writer, MatrixTableWriter::Open(out));
  std::string key;
  Matrix feats;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&key, &feats));
    if (!more) return writer->Close();
    auto spliced = SpliceFrames(feats, left, right);
    if (!spliced.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("utterance ", key, ": ", spliced.status().message()));
    }
    GMM_RETURN_IF_ERROR(writer->Write(key, *spliced));
  }
}

}  // namespace

int RunSpliceFeats(int argc, char** argv) {
  Args args(kProgram,
            "[options] <feature-rspecifier> <feature-wspecifier>\n"
            "Splice features with left and right context (e.g. prior to LDA)\n"
            "e.g.: splice-feats scp:feats.scp ark:-");
  int32_t left = 4, right = 4;
  args.Register("left-context", &left, "Number of frames of left context")
      .Register("right-context", &right, "Number of frames of right context");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 2) return Usage(args);
  if (absl::Status s = Splice(pos[0], pos[1], left, right); !s.ok()) {
    return Fail(kProgram, s);
  }
  return 0;
}

}  // namespace gmmscore

// Kaldi's copy-matrix (run under that name): matrices or tables of matrices copied, optionally
// scaled, logged, exponentiated, softmaxed per row or raised to a power (tools/matrix_copy.h).
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "formats/table_specifier.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "tools/matrix_copy.h"

namespace gmmscore {

int RunCopyMatrix(int argc, char** argv) {
  constexpr char kProgram[] = "copy-matrix";
  Args args(kProgram,
            "[options] <matrix-in-rspecifier> <matrix-out-wspecifier>\n"
            "  or: copy-matrix [options] <matrix-in-rxfilename> <matrix-out-wxfilename>\n"
            "Copy matrices, or archives of matrices (e.g. features or transforms)\n"
            "e.g.: copy-matrix --binary=false 1.mat -\n"
            "      copy-matrix ark:2.trans ark,t:-");
  MatrixTransform transform;
  bool binary = true;
  args.Register("binary", &binary, "Write in binary mode (only relevant if output is a wxfilename)")
      .Register("scale", &transform.scale, "scale the matrices being copied")
      .Register("apply-log", &transform.apply_log,
                "apply log to the matrices (values floored at 1e-20)")
      .Register("apply-exp", &transform.apply_exp, "apply exp to the matrices")
      .Register("apply-power", &transform.power, "raise the matrices' values to this power")
      .Register("apply-softmax-per-row", &transform.softmax_per_row,
                "apply softmax to each row of the matrices");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 2) return Usage(args);
  if (absl::Status s = CheckMatrixTransform(transform); !s.ok()) return Fail(kProgram, s);
  const bool table_in = IsTableSpecifier(pos[0]);
  if (table_in != IsTableSpecifier(pos[1])) {
    return Fail(kProgram, absl::InvalidArgumentError(
                              "Cannot mix archives with regular files (copying matrices)"));
  }
  if (!table_in) {
    if (absl::Status s = CopyMatrixFile(pos[0], pos[1], transform, binary); !s.ok()) {
      return Fail(kProgram, s);
    }
    KaldiLog(stderr, "LOG", kProgram, "Copied matrix to " + pos[1]);
    return 0;
  }
  auto done = CopyMatrixTable(pos[0], pos[1], transform);
  if (!done.ok()) return Fail(kProgram, done.status());
  KaldiLog(stderr, "LOG", kProgram, absl::StrCat("Copied ", *done, " matrices."));
  return *done != 0 ? 0 : 1;
}

}  // namespace gmmscore

// Kaldi's add-deltas (run under that name): delta and acceleration features appended to each
// matrix (feat/deltas.h, to Kaldi's bit), as train_mono.sh and train_deltas.sh pipe them.
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "feat/deltas.h"
#include "formats/matrix_table.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "add-deltas";

absl::Status AddDeltas(const std::string& in, const std::string& out, const DeltaOptions& opts,
                       int32_t truncate) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableReader> reader, MatrixTableReader::Open(in));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableWriter> writer, MatrixTableWriter::Open(out));
  std::string key;
  Matrix feats;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&key, &feats));
    if (!more) return writer->Close();
    if (feats.rows == 0) {
      KaldiLog(stderr, "WARNING", kProgram, "Empty feature matrix for key " + key);
      continue;
    }
    if (truncate != 0) {
      if (truncate > feats.cols) {
        return absl::InvalidArgumentError(
            absl::StrCat("utterance ", key, ": cannot truncate features as dimension ", feats.cols,
                         " is smaller than truncation dimension ", truncate));
      }
      Matrix cut(feats.rows, truncate);
      for (int32_t t = 0; t < feats.rows; ++t) std::copy_n(feats.row(t), truncate, cut.row(t));
      feats = std::move(cut);
    }
    GMM_RETURN_IF_ERROR(writer->Write(key, ComputeDeltas(opts, feats)));
  }
}

}  // namespace

int RunAddDeltas(int argc, char** argv) {
  Args args(kProgram,
            "[options] IN-RSPECIFIER OUT-WSPECIFIER\n"
            "Adds delta and acceleration features (Kaldi's add-deltas).\n"
            "e.g.: add-deltas ark:feats.ark ark:-");
  DeltaOptions opts;
  int32_t truncate = 0;
  args.Register("delta-order", &opts.order, "order of delta computation")
      .Register("delta-window", &opts.window,
                "parameter controlling window for delta computation (actual window size for each "
                "delta order is 1 + 2*delta-window-size)")
      .Register("truncate", &truncate, "if nonzero, first truncate features to this dimension");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 2) return Usage(args);
  if (absl::Status s = opts.Validate(); !s.ok()) return Fail(kProgram, s);
  if (truncate < 0) {
    return Fail(kProgram, absl::InvalidArgumentError("--truncate must be >= 0"));
  }
  if (absl::Status s = AddDeltas(pos[0], pos[1], opts, truncate); !s.ok()) {
    return Fail(kProgram, s);
  }
  return 0;
}

}  // namespace gmmscore

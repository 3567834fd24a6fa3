// Kaldi's ali-to-post (run under that name): each frame's transition-id of an alignment as a
// posterior of weight 1 (align/posteriors.h), as align_fmllr.sh and train_sat.sh convert them.
#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "align/posteriors.h"
#include "formats/kaldi_tables.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "ali-to-post";

absl::StatusOr<int64_t> Convert(const std::string& in, const std::string& out) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<Int32VectorTableReader> reader,
                       Int32VectorTableReader::Open(in));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<PosteriorTableWriter> writer,
                       PosteriorTableWriter::Open(out));
  int64_t done = 0;
  std::string key;
  std::vector<int32_t> alignment;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&key, &alignment));
    if (!more) break;
    GMM_RETURN_IF_ERROR(writer->Write(key, AlignmentToPosterior(alignment)));
    ++done;
  }
  GMM_RETURN_IF_ERROR(writer->Close());
  return done;
}

}  // namespace

int RunAliToPost(int argc, char** argv) {
  Args args(kProgram,
            "[options] <alignments-rspecifier> <posteriors-wspecifier>\n"
            "Convert alignments to posteriors (each frame's id with weight 1.0).\n"
            "e.g.: ali-to-post ark:1.ali ark:1.post");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 2) return Usage(args);
  auto done = Convert(pos[0], pos[1]);
  if (!done.ok()) return Fail(kProgram, done.status());
  KaldiLog(stderr, "LOG", kProgram, absl::StrCat("Converted ", *done, " alignments."));
  return *done != 0 ? 0 : 1;
}

}  // namespace gmmscore

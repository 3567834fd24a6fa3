// Kaldi's feat-to-dim and feat-to-len (run under those names): the dimension and the number of
// frames of feature matrices, which make_mfcc.sh, train_mono.sh and utils/data/get_utt2dur.sh
// read (`feat-to-dim scp:feats.scp -`, `feat-to-len scp:feats.scp ark,t:-`).
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "formats/kaldi_stream.h"
#include "formats/kaldi_tables.h"
#include "formats/matrix_table.h"
#include "formats/table_specifier.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// feat-to-dim's work: per entry to a table, or the first entry's dimension to a file.
absl::Status WriteDims(const std::string& rspecifier, const std::string& out) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableReader> reader,
                       MatrixTableReader::Open(rspecifier));
  std::string key;
  Matrix feats;
  if (IsTableSpecifier(out)) {
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<Int32TableWriter> writer, Int32TableWriter::Open(out));
    while (true) {
      GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&key, &feats));
      if (!more) return writer->Close();
      GMM_RETURN_IF_ERROR(writer->Write(key, feats.cols));
    }
  }
  GMM_ASSIGN_OR_RETURN(const bool any, reader->Next(&key, &feats));
  if (!any) {
    return absl::InvalidArgumentError(
        absl::StrCat(rspecifier, ": could not read any features (empty archive?)"));
  }
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<OutputStream> output, OutputStream::Open(out));
  output->stream() << feats.cols << "\n";
  return output->Close();
}

// feat-to-len's work: per entry to a table, or (out empty) the total to stdout.
absl::Status WriteLengths(const std::string& rspecifier, const std::string& out) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableReader> reader,
                       MatrixTableReader::Open(rspecifier));
  std::unique_ptr<Int32TableWriter> writer;
  if (!out.empty()) {
    GMM_ASSIGN_OR_RETURN(writer, Int32TableWriter::Open(out));
  }
  int64_t total = 0;
  std::string key;
  Matrix feats;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&key, &feats));
    if (!more) break;
    total += feats.rows;
    if (writer != nullptr) GMM_RETURN_IF_ERROR(writer->Write(key, feats.rows));
  }
  if (writer != nullptr) return writer->Close();
  std::printf("%lld\n", static_cast<long long>(total));
  return absl::OkStatus();
}

}  // namespace

int RunFeatToDim(int argc, char** argv) {
  Args args("feat-to-dim",
            "[options] FEAT-RSPECIFIER (DIM-WSPECIFIER|DIM-WXFILENAME)\n"
            "Writes the dimension of each feature matrix to a table, or of the first to a file.\n"
            "e.g.: feat-to-dim scp:feats.scp -");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 2) return Usage(args);
  if (absl::Status s = WriteDims(pos[0], pos[1]); !s.ok()) return Fail("feat-to-dim", s);
  return 0;
}

int RunFeatToLen(int argc, char** argv) {
  Args args("feat-to-len",
            "[options] FEAT-RSPECIFIER [LENGTH-WSPECIFIER]\n"
            "Writes the number of frames of each feature matrix to a table, or their total to\n"
            "stdout.\n"
            "e.g.: feat-to-len scp:feats.scp ark,t:utt2num_frames");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 1 && pos.size() != 2) return Usage(args);
  if (absl::Status s = WriteLengths(pos[0], pos.size() == 2 ? pos[1] : ""); !s.ok()) {
    return Fail("feat-to-len", s);
  }
  return 0;
}

}  // namespace gmmscore

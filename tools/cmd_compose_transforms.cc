// Kaldi's compose-transforms (run under that name): C = A B of two feature transforms
// (feat/feature_transform.h), each a matrix file or a table, as decode_fmllr.sh and the LDA+MLLT
// and SAT recipes compose them.
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "feat/feature_transform.h"
#include "formats/kaldi_tables.h"
#include "formats/matrix_table.h"
#include "formats/table_by_key.h"
#include "formats/table_specifier.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "compose-transforms";

void Warn(const std::string& what) { KaldiLog(stderr, "WARNING", kProgram, what); }

struct Options {
  bool b_is_affine = false;
  bool binary = true;
  std::string utt2spk;
};

// Composes and writes one entry; an empty matrix is warned about and skipped (Kaldi's
// ComposeTransforms returns false for it), mismatched dimensions are an error.
absl::Status WriteComposed(const std::string& key, const Matrix& a, const Matrix& b,
                           const Options& options, MatrixTableWriter& writer) {
  if (b.rows == 0 || a.cols == 0) {
    Warn("Empty matrix in ComposeTransforms");
    return absl::OkStatus();
  }
  GMM_ASSIGN_OR_RETURN(const Matrix c, ComposeTransforms(a, b, options.b_is_affine));
  return writer.Write(key, c);
}

absl::Status ComposeTables(const std::string& a_in, const std::string& b_in,
                           const std::string& c_out, const Options& options) {
  const bool a_table = IsTableSpecifier(a_in), b_table = IsTableSpecifier(b_in);
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableWriter> writer, MatrixTableWriter::Open(c_out));
  if (a_table && b_table) {
    GMM_ASSIGN_OR_RETURN(const auto b_by_key, (ReadTableByKey<MatrixTableReader, Matrix>(b_in)));
    std::map<std::string, std::string> utt2spk;
    if (!options.utt2spk.empty()) {
      GMM_ASSIGN_OR_RETURN(utt2spk, ReadTokenMap(options.utt2spk));
    }
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableReader> a_reader,
                         MatrixTableReader::Open(a_in));
    std::string key;
    Matrix a;
    while (true) {
      GMM_ASSIGN_OR_RETURN(const bool more, a_reader->Next(&key, &a));
      if (!more) break;
      // With --utt2spk, A is per utterance and B per speaker.
      std::string b_key = key;
      if (!options.utt2spk.empty()) {
        const auto spk = utt2spk.find(key);
        if (spk == utt2spk.end()) {
          Warn("No speaker provided for utterance " + key +
               " (perhaps you wrongly provided utt2spk option to  compose-transforms?)");
          continue;
        }
        b_key = spk->second;
      }
      const auto b = b_by_key.find(b_key);
      if (b == b_by_key.end()) {
        Warn("Second table does not have key " + b_key);
        continue;
      }
      GMM_RETURN_IF_ERROR(WriteComposed(key, a, b->second, options, *writer));
    }
  } else if (a_table) {
    GMM_ASSIGN_OR_RETURN(const Matrix b, ReadMatrixFile(b_in));
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableReader> a_reader,
                         MatrixTableReader::Open(a_in));
    std::string key;
    Matrix a;
    while (true) {
      GMM_ASSIGN_OR_RETURN(const bool more, a_reader->Next(&key, &a));
      if (!more) break;
      GMM_RETURN_IF_ERROR(WriteComposed(key, a, b, options, *writer));
    }
  } else {
    GMM_ASSIGN_OR_RETURN(const Matrix a, ReadMatrixFile(a_in));
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableReader> b_reader,
                         MatrixTableReader::Open(b_in));
    std::string key;
    Matrix b;
    while (true) {
      GMM_ASSIGN_OR_RETURN(const bool more, b_reader->Next(&key, &b));
      if (!more) break;
      GMM_RETURN_IF_ERROR(WriteComposed(key, a, b, options, *writer));
    }
  }
  return writer->Close();
}

// Both inputs files: one matrix to a file; an empty one ends the command with status 1.
absl::StatusOr<bool> ComposeFiles(const std::string& a_in, const std::string& b_in,
                                  const std::string& c_out, const Options& options) {
  GMM_ASSIGN_OR_RETURN(const Matrix a, ReadMatrixFile(a_in));
  GMM_ASSIGN_OR_RETURN(const Matrix b, ReadMatrixFile(b_in));
  if (!options.b_is_affine && a.rows + 1 == a.cols && a.rows == b.rows && a.cols == b.cols) {
    Warn(
        "It looks like you are trying to compose two affine transforms, but you omitted the "
        "--b-is-affine option.");
  }
  if (b.rows == 0 || a.cols == 0) {
    Warn("Empty matrix in ComposeTransforms");
    return false;
  }
  GMM_ASSIGN_OR_RETURN(const Matrix c, ComposeTransforms(a, b, options.b_is_affine));
  GMM_RETURN_IF_ERROR(WriteMatrixFile(c, c_out, options.binary));
  return true;
}

}  // namespace

int RunComposeTransforms(int argc, char** argv) {
  Args args(kProgram,
            "[options] (<transform-A-rspecifier>|<transform-A-rxfilename>) "
            "(<transform-B-rspecifier>|<transform-B-rxfilename>) "
            "(<transform-out-wspecifier>|<transform-out-wxfilename>)\n"
            "Compose (affine or linear) feature transforms\n"
            " Note: it does matrix multiplication (A B) so B is the transform that gets applied\n"
            "  to the features first.  If b-is-affine = true, then assume last column of b "
            "corresponds to offset\n"
            " e.g.: compose-transforms 1.mat 2.mat 3.mat\n"
            "   compose-transforms 1.mat ark:2.trans ark:3.trans\n"
            "   compose-transforms ark:1.trans ark:2.trans ark:3.trans");
  Options options;
  args.Register("utt2spk", &options.utt2spk,
                "rspecifier for utterance to speaker map (if mixing utterance and speaker ids)")
      .Register("b-is-affine", &options.b_is_affine,
                "If true, treat last column of transform b as an offset term (only relevant if a "
                "is affine)")
      .Register("binary", &options.binary,
                "Write in binary mode (only relevant if output is a wxfilename)");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 3) return Usage(args);
  const bool a_table = IsTableSpecifier(pos[0]), b_table = IsTableSpecifier(pos[1]),
             c_table = IsTableSpecifier(pos[2]);
  if (!options.utt2spk.empty() && !(a_table && b_table)) {
    return Fail(kProgram, absl::InvalidArgumentError(
                              "Error: utt2spk option provided compose transforms but at least "
                              "one of the inputs is a global transform."));
  }
  if ((a_table || b_table) != c_table) {
    return Fail(kProgram,
                absl::InvalidArgumentError(
                    "Formats of the input and output rspecifiers/rxfilenames do not match (if "
                    "either a or b is an rspecifier, then the output must be a wspecifier."));
  }
  if (c_table) {
    if (absl::Status s = ComposeTables(pos[0], pos[1], pos[2], options); !s.ok()) {
      return Fail(kProgram, s);
    }
    return 0;
  }
  auto composed = ComposeFiles(pos[0], pos[1], pos[2], options);
  if (!composed.ok()) return Fail(kProgram, composed.status());
  return *composed ? 0 : 1;
}

}  // namespace gmmscore

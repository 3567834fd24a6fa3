// Kaldi's transform-feats (run under that name): a linear or affine transform applied to every
// frame (feat/feature_transform.h): one global matrix from a file, or per utterance from a table,
// or per speaker from a table keyed by speaker with --utt2spk; with transform-feats' arguments,
// warnings, log lines (the average log-determinant) and exit status.
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "feat/feature_transform.h"
#include "formats/kaldi_io.h"
#include "formats/kaldi_stream.h"
#include "formats/kaldi_tables.h"
#include "formats/matrix_table.h"
#include "formats/table_specifier.h"
#include "formats/utterance_transforms.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "transform-feats";

void Log(const std::string& what) { KaldiLog(stderr, "LOG", kProgram, what); }
void Warn(const std::string& what) { KaldiLog(stderr, "WARNING", kProgram, what); }

struct Counts {
  int64_t done = 0, errors = 0;
};

absl::Status Transform(const std::string& transform_in, const std::string& feats_in,
                       const std::string& feats_out, const std::string& utt2spk, Counts* counts) {
  std::optional<Matrix> global;
  std::optional<UtteranceTransforms> table;
  if (IsTableSpecifier(transform_in)) {
    GMM_ASSIGN_OR_RETURN(table, UtteranceTransforms::Open(transform_in, utt2spk));
  } else {
    GMM_ASSIGN_OR_RETURN(global, ReadMatrixFile(transform_in));
  }
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableReader> reader,
                       MatrixTableReader::Open(feats_in));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableWriter> writer,
                       MatrixTableWriter::Open(feats_out));
  // Kaldi's kind of log-determinant, from the first utterance transformed: a true one for a
  // square linear part, a "pseudo" one where the transform reduces the dimension, none where it
  // increases it.
  enum { kUnknown, kLogDet, kPseudoLogDet, kDimIncrease } kind = kUnknown;
  double total_frames = 0.0, total_logdet = 0.0;
  std::optional<double> global_logdet;
  std::string utt;
  Matrix feats;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&utt, &feats));
    if (!more) break;
    const Matrix* transform = global ? &*global : table->Find(utt);
    if (transform == nullptr) {
      Warn("No fMLLR transform available for utterance " + utt +
           ", producing no output for this utterance");
      ++counts->errors;
      continue;
    }
    const int32_t dim = feats.cols;
    if (ClassifyTransform(*transform, dim) == TransformShape::kBad) {
      Warn(absl::StrCat("Transform matrix for utterance ", utt, " has bad dimension ",
                        transform->rows, "x", transform->cols, " versus feat dim ", dim));
      if (transform->cols == dim + 2) {
        Warn(
            "[perhaps the transform was created by compose-transforms, and you forgot the "
            "--b-is-affine option?]");
      }
      ++counts->errors;
      continue;
    }
    GMM_ASSIGN_OR_RETURN(const Matrix out, ApplyFeatureTransform(*transform, feats));
    ++counts->done;
    if (kind == kUnknown) {
      kind =
          transform->rows == dim ? kLogDet : (transform->rows < dim ? kPseudoLogDet : kDimIncrease);
    }
    if (kind != kDimIncrease) {
      // A global transform's is computed once.
      double logdet = 0.0;
      if (global_logdet) {
        logdet = *global_logdet;
      } else {
        logdet = static_cast<float>(TransformHalfLogDet(*transform, dim));
        if (global) global_logdet = logdet;
      }
      if (std::isfinite(logdet)) {
        total_frames += feats.rows;
        total_logdet += feats.rows * logdet;
      } else {
        Warn("Matrix has bad logdet " + KaldiNumber(logdet));
      }
    }
    GMM_RETURN_IF_ERROR(writer->Write(utt, out));
  }
  GMM_RETURN_IF_ERROR(writer->Close());
  if (kind == kLogDet || kind == kPseudoLogDet) {
    Log(std::string("Overall average ") + (kind == kPseudoLogDet ? "[pseudo-]" : "") +
        "logdet is " + KaldiNumber(total_logdet / total_frames) + " over " +
        KaldiNumber(total_frames) + " frames.");
  }
  return absl::OkStatus();
}

}  // namespace

int RunTransformFeats(int argc, char** argv) {
  Args args(kProgram,
            "[options] (<transform-rspecifier>|<transform-rxfilename>) <feats-rspecifier> "
            "<feats-wspecifier>\n"
            "Apply transform (e.g. LDA; HLDA; fMLLR/CMLLR; MLLT/STC)\n"
            "Linear transform if transform-num-cols == feature-dim, affine if\n"
            "transform-num-cols == feature-dim+1 (->append 1.0 to features)\n"
            "Per-utterance by default, or per-speaker if utt2spk option provided\n"
            "Global if transform-rxfilename provided.");
  std::string utt2spk;
  args.Register("utt2spk", &utt2spk, "rspecifier for utterance to speaker map");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 3) return Usage(args);
  Counts counts;
  if (absl::Status s = Transform(pos[0], pos[1], pos[2], utt2spk, &counts); !s.ok()) {
    return Fail(kProgram, s);
  }
  Log(absl::StrCat("Applied transform to ", counts.done, " utterances; ", counts.errors,
                   " had errors."));
  return counts.done != 0 ? 0 : 1;
}

}  // namespace gmmscore

// Kaldi's copy-feats (run under that name): copies feature matrices from a table or a file to
// another, optionally as Kaldi's compressed matrices (--compress, byte for byte as Kaldi writes
// them: formats/kaldi_compressed_matrix.h), writing each matrix's number of frames beside
// (--write-num-frames), as make_mfcc.sh stores features.
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "formats/kaldi_compressed_matrix.h"
#include "formats/kaldi_io.h"
#include "formats/kaldi_tables.h"
#include "formats/matrix_table.h"
#include "formats/table_specifier.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "copy-feats";

struct CopyOptions {
  bool compress = false;
  CompressionMethod method = CompressionMethod::kAutomatic;
  std::string num_frames;  // wspecifier, or empty
};

// One matrix object: compressed (its text form is the values it decompresses to), or full.
absl::Status WriteObject(const Matrix& m, const CopyOptions& opts, std::ostream& os, bool binary) {
  if (opts.compress) {
    if (binary) os.write("\0B", 2);
    return WriteCompressedMatrix(m, opts.method, os, binary);
  }
  KaldiWriter writer(os, binary);
  writer.BinaryMarker();
  writer.FloatMatrix(m);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> CopyTable(const std::string& in, const std::string& out,
                                  const CopyOptions& opts) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableReader> reader, MatrixTableReader::Open(in));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryWriter> writer, TableEntryWriter::Open(out));
  std::unique_ptr<Int32TableWriter> frames;
  if (!opts.num_frames.empty()) {
    GMM_ASSIGN_OR_RETURN(frames, Int32TableWriter::Open(opts.num_frames));
  }
  int64_t done = 0;
  std::string key;
  Matrix feats;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&key, &feats));
    if (!more) break;
    absl::Status written;
    GMM_RETURN_IF_ERROR(writer->Write(key, [&](std::ostream& os, bool binary) {
      written = WriteObject(feats, opts, os, binary);
    }));
    if (!written.ok()) {
      return absl::Status(written.code(), absl::StrCat("utterance ", key, ": ", written.message()));
    }
    if (frames != nullptr) GMM_RETURN_IF_ERROR(frames->Write(key, feats.rows));
    ++done;
  }
  GMM_RETURN_IF_ERROR(writer->Close());
  if (frames != nullptr) GMM_RETURN_IF_ERROR(frames->Close());
  return done;
}

absl::Status CopyFile(const std::string& in, const std::string& out, const CopyOptions& opts,
                      bool binary) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> input, InputStream::Open(in));
  const bool binary_in = KaldiReader::ConsumeBinaryMarker(input->stream());
  KaldiReader reader(input->stream(), input->name(), binary_in);
  GMM_ASSIGN_OR_RETURN(const Matrix m, reader.FloatMatrix());
  GMM_RETURN_IF_ERROR(input->Close());
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<OutputStream> output, OutputStream::Open(out));
  GMM_RETURN_IF_ERROR(WriteObject(m, opts, output->stream(), binary));
  if (!output->stream()) {
    return absl::DataLossError(absl::StrCat(output->name(), ": write failed"));
  }
  return output->Close();
}

}  // namespace

int RunCopyFeats(int argc, char** argv) {
  Args args(kProgram,
            "[options] (FEATURE-RSPECIFIER FEATURE-WSPECIFIER | FEATS-RXFILENAME "
            "FEATS-WXFILENAME)\n"
            "Copies features, optionally compressing them (Kaldi's copy-feats).\n"
            "e.g.: copy-feats --compress=true ark:- ark,scp:raw_mfcc.1.ark,raw_mfcc.1.scp");
  CopyOptions opts;
  bool binary = true;
  int32_t method_number = static_cast<int32_t>(opts.method);
  args.Register("binary", &binary, "binary mode (applies only to a file output, not a table)")
      .Register("compress", &opts.compress, "write Kaldi's compressed matrices")
      .Register("compression-method", &method_number,
                "1: automatic, 2: speech features, 3: two bytes auto, 4: two bytes signed "
                "integers, 5: one byte auto, 6: one byte unsigned integers, 7: one byte 0..1")
      .Register("write-num-frames", &opts.num_frames,
                "write each matrix's number of frames to a table");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 2) return Usage(args);
  auto method = ParseCompressionMethod(method_number);
  if (!method.ok()) return Fail(kProgram, method.status());
  opts.method = *method;
  if (IsTableSpecifier(pos[0])) {
    auto done = CopyTable(pos[0], pos[1], opts);
    if (!done.ok()) return Fail(kProgram, done.status());
    KaldiLog(stderr, "LOG", kProgram, absl::StrCat("Copied ", *done, " feature matrices."));
    return *done != 0 ? 0 : 1;
  }
  if (!opts.num_frames.empty()) {
    return Fail(kProgram, absl::InvalidArgumentError(
                              "--write-num-frames option not supported when copying to a file"));
  }
  if (absl::Status s = CopyFile(pos[0], pos[1], opts, binary); !s.ok()) {
    return Fail(kProgram, s);
  }
  KaldiLog(stderr, "LOG", kProgram, "Copied features from " + pos[0] + " to " + pos[1]);
  return 0;
}

}  // namespace gmmscore

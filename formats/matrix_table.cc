#include "formats/matrix_table.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "formats/htk_features.h"
#include "formats/kaldi_io.h"
#include "formats/kaldi_stream.h"
#include "formats/sphinx_features.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

absl::Status OpenError(const std::string& path) {
  return absl::NotFoundError(absl::StrCat(path, ": cannot open for reading"));
}

// Reads one Kaldi matrix object (binary marker or text) from where the stream stands.
absl::StatusOr<Matrix> ReadKaldiMatrixObject(std::istream& is, const std::string& name) {
  const bool binary = KaldiReader::ConsumeBinaryMarker(is);
  KaldiReader reader(is, name, binary);
  return reader.FloatMatrix();
}

absl::StatusOr<Matrix> ReadFeatureFile(std::istream& is, const std::string& name,
                                       FeatureFileKind kind, int32_t sphinx_dim) {
  switch (kind) {
    case FeatureFileKind::kHtk:
      return ReadHtkFeatures(is, name);
    case FeatureFileKind::kSphinx:
      return ReadSphinxFeatures(is, name, sphinx_dim);
    case FeatureFileKind::kKaldi:
      break;
  }
  return ReadKaldiMatrixObject(is, name);
}

// "ark:" and "scp:" tables: Kaldi matrix objects, or (scp,htk / scp,sphinx) feature files.
class EntriesReader final : public MatrixTableReader {
 public:
  EntriesReader(std::unique_ptr<TableEntryReader> entries, TableSpecifier spec)
      : entries_(std::move(entries)), spec_(std::move(spec)) {}

  absl::StatusOr<bool> Next(std::string* key, Matrix* value) override {
    GMM_ASSIGN_OR_RETURN(const bool more, entries_->Next(key));
    if (!more) return false;
    GMM_ASSIGN_OR_RETURN(*value, ReadFeatureFile(entries_->object(), entries_->object_name(),
                                                 spec_.file_kind, spec_.sphinx_dim));
    return true;
  }

 private:
  std::unique_ptr<TableEntryReader> entries_;
  TableSpecifier spec_;
};

// "htk:F", "sphinx:F": one file, keyed by its name without folder and extension.
class SingleFileReader final : public MatrixTableReader {
 public:
  explicit SingleFileReader(TableSpecifier spec) : spec_(std::move(spec)) {}

  absl::StatusOr<bool> Next(std::string* key, Matrix* value) override {
    if (done_) return false;
    done_ = true;
    std::ifstream file(spec_.path, std::ios::binary);
    if (!file) return OpenError(spec_.path);
    *key = std::filesystem::path(spec_.path).stem().string();
    GMM_ASSIGN_OR_RETURN(*value,
                         ReadFeatureFile(file, spec_.path, spec_.file_kind, spec_.sphinx_dim));
    return true;
  }

 private:
  TableSpecifier spec_;
  bool done_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<MatrixTableReader>> MatrixTableReader::Open(
    const std::string& rspecifier) {
  GMM_ASSIGN_OR_RETURN(TableSpecifier spec, ParseRspecifier(rspecifier));
  if (spec.kind == TableKind::kHtkFile || spec.kind == TableKind::kSphinxFile) {
    return std::unique_ptr<MatrixTableReader>(new SingleFileReader(std::move(spec)));
  }
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryReader> entries, TableEntryReader::Open(spec));
  return std::unique_ptr<MatrixTableReader>(new EntriesReader(std::move(entries), std::move(spec)));
}

absl::StatusOr<std::unique_ptr<MatrixTableWriter>> MatrixTableWriter::Open(
    const std::string& wspecifier, TextReals reals) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryWriter> entries,
                       TableEntryWriter::Open(wspecifier));
  return std::unique_ptr<MatrixTableWriter>(new MatrixTableWriter(std::move(entries), reals));
}

absl::Status MatrixTableWriter::Write(const std::string& key, const Matrix& value) {
  return entries_->Write(key, [&](std::ostream& os, bool binary) {
    KaldiWriter writer(os, binary, reals_);
    writer.BinaryMarker();
    writer.FloatMatrix(value);
  });
}

absl::StatusOr<Matrix> ReadMatrixFile(const std::string& rxfilename) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> input, InputStream::Open(rxfilename));
  KaldiReader reader(input->stream(), input->name(),
                     KaldiReader::ConsumeBinaryMarker(input->stream()));
  GMM_ASSIGN_OR_RETURN(Matrix m, reader.FloatMatrix());
  GMM_RETURN_IF_ERROR(input->Close());
  return m;
}

absl::Status WriteMatrixFile(const Matrix& m, const std::string& wxfilename, bool binary,
                             TextReals reals) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<OutputStream> output, OutputStream::Open(wxfilename));
  KaldiWriter writer(output->stream(), binary, reals);
  writer.BinaryMarker();
  writer.FloatMatrix(m);
  if (!output->stream()) {
    return absl::DataLossError(absl::StrCat(output->name(), ": write failed"));
  }
  return output->Close();
}

}  // namespace gmmscore

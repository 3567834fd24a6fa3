#include "formats/matrix_table.h"

#include <cctype>
#include <filesystem>
#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "formats/htk_features.h"
#include "formats/kaldi_io.h"
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

// "ark:" archives: "KEY " followed by a matrix object, repeated.
class ArchiveReader final : public MatrixTableReader {
 public:
  ArchiveReader(std::unique_ptr<std::ifstream> file, std::string name)
      : file_(std::move(file)), is_(file_ ? *file_ : std::cin), name_(std::move(name)) {}

  absl::StatusOr<bool> Next(std::string* key, Matrix* value) override {
    is_ >> std::ws;
    if (is_.peek() == EOF) return false;
    key->clear();
    for (int c = is_.get(); c != EOF && c != ' '; c = is_.get()) {
      if (std::isspace(c) || c == '\0') {
        return absl::InvalidArgumentError(
            absl::StrCat(name_, ": bad archive key after '", *key, "' (is this a Kaldi archive?)"));
      }
      key->push_back(static_cast<char>(c));
      if (key->size() > 4096)
        return absl::InvalidArgumentError(absl::StrCat(name_, ": key too long"));
    }
    GMM_ASSIGN_OR_RETURN(*value,
                         ReadKaldiMatrixObject(is_, absl::StrCat(name_, " (key ", *key, ")")));
    return true;
  }

 private:
  std::unique_ptr<std::ifstream> file_;
  std::istream& is_;
  std::string name_;
};

// "scp:" scripts: lines "KEY RXFILENAME", where RXFILENAME is a file or "ARCHIVE:OFFSET".
class ScriptReader final : public MatrixTableReader {
 public:
  ScriptReader(std::unique_ptr<std::ifstream> file, std::string name, TableSpecifier spec)
      : file_(std::move(file)),
        is_(file_ ? *file_ : std::cin),
        name_(std::move(name)),
        spec_(std::move(spec)) {}

  absl::StatusOr<bool> Next(std::string* key, Matrix* value) override {
    std::string line;
    while (true) {
      if (!std::getline(is_, line)) return false;
      ++line_number_;
      if (!absl::StripAsciiWhitespace(line).empty()) break;
    }
    const absl::string_view stripped = absl::StripAsciiWhitespace(line);
    const auto space = stripped.find_first_of(" \t");
    if (space == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(name_, ": line ", line_number_, ": expected KEY RXFILENAME"));
    }
    *key = std::string(stripped.substr(0, space));
    std::string rx(absl::StripAsciiWhitespace(stripped.substr(space)));
    int64_t offset = -1;
    const auto colon = rx.rfind(':');
    if (colon != std::string::npos && colon + 1 < rx.size() &&
        absl::SimpleAtoi(rx.substr(colon + 1), &offset)) {
      rx.resize(colon);
    }
    if (rx != open_path_) {
      stream_ = std::make_unique<std::ifstream>(rx, std::ios::binary);
      open_path_ = rx;
      if (!*stream_) {
        open_path_.clear();
        return absl::NotFoundError(
            absl::StrCat(name_, ": line ", line_number_, ": cannot open ", rx));
      }
    }
    stream_->clear();
    stream_->seekg(offset >= 0 ? offset : 0);
    if (!*stream_) {
      return absl::InvalidArgumentError(
          absl::StrCat(name_, ": line ", line_number_, ": cannot seek to ", offset, " in ", rx));
    }
    GMM_ASSIGN_OR_RETURN(*value, ReadFeatureFile(*stream_, absl::StrCat(rx, " (key ", *key, ")"),
                                                 spec_.file_kind, spec_.sphinx_dim));
    return true;
  }

 private:
  std::unique_ptr<std::ifstream> file_;
  std::istream& is_;
  std::string name_;
  TableSpecifier spec_;
  int64_t line_number_ = 0;
  std::unique_ptr<std::ifstream> stream_;
  std::string open_path_;
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
  std::unique_ptr<std::ifstream> file;
  std::string name = spec.path == "-" ? "stdin" : spec.path;
  if ((spec.kind == TableKind::kArchive || spec.kind == TableKind::kScript) && spec.path != "-") {
    file = std::make_unique<std::ifstream>(spec.path, std::ios::binary);
    if (!*file) return OpenError(spec.path);
  }
  switch (spec.kind) {
    case TableKind::kArchive:
      return std::unique_ptr<MatrixTableReader>(new ArchiveReader(std::move(file), name));
    case TableKind::kScript:
      return std::unique_ptr<MatrixTableReader>(
          new ScriptReader(std::move(file), name, std::move(spec)));
    case TableKind::kHtkFile:
    case TableKind::kSphinxFile:
      return std::unique_ptr<MatrixTableReader>(new SingleFileReader(std::move(spec)));
    case TableKind::kArchiveAndScript:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat("cannot read from '", rspecifier, "'"));
}

absl::StatusOr<std::unique_ptr<MatrixTableWriter>> MatrixTableWriter::Open(
    const std::string& wspecifier) {
  GMM_ASSIGN_OR_RETURN(TableSpecifier spec, ParseWspecifier(wspecifier));
  std::unique_ptr<MatrixTableWriter> w(new MatrixTableWriter());
  if (spec.path == "-") {
    w->archive_ = &std::cout;
    w->description_ = "stdout";
  } else {
    w->file_.open(spec.path, std::ios::binary | std::ios::trunc);
    if (!w->file_) {
      return absl::PermissionDeniedError(absl::StrCat(spec.path, ": cannot open for writing"));
    }
    w->archive_ = &w->file_;
    w->description_ = spec.path;
  }
  if (spec.kind == TableKind::kArchiveAndScript) {
    if (spec.path == "-") {
      return absl::InvalidArgumentError("ark,scp needs a real archive file, not -");
    }
    w->script_.open(spec.script_path, std::ios::trunc);
    if (!w->script_) {
      return absl::PermissionDeniedError(
          absl::StrCat(spec.script_path, ": cannot open for writing"));
    }
    absl::StrAppend(&w->description_, " (script ", spec.script_path, ")");
  }
  w->spec_ = std::move(spec);
  return w;
}

MatrixTableWriter::~MatrixTableWriter() {
  if (!closed_) Close().IgnoreError();
}

absl::Status MatrixTableWriter::Write(const std::string& key, const Matrix& value) {
  if (key.empty() || key.find_first_of(" \t\n") != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("bad key '", key, "': keys have no spaces"));
  }
  *archive_ << key << ' ';
  if (spec_.kind == TableKind::kArchiveAndScript) {
    script_ << key << ' ' << spec_.path << ':' << archive_->tellp() << '\n';
  }
  KaldiWriter writer(*archive_, !spec_.text);
  writer.BinaryMarker();
  writer.FloatMatrix(value);
  if (!*archive_) return absl::DataLossError(absl::StrCat(description_, ": write failed"));
  return absl::OkStatus();
}

absl::Status MatrixTableWriter::Close() {
  closed_ = true;
  archive_->flush();
  if (file_.is_open()) file_.close();
  if (script_.is_open()) script_.close();
  if (!*archive_ || (file_.is_open() && !file_)) {
    return absl::DataLossError(absl::StrCat(description_, ": write failed"));
  }
  return absl::OkStatus();
}

}  // namespace gmmscore

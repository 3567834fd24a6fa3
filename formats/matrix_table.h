// Sequential reading and writing of keyed float matrices (feature archives in, score archives
// out) through Kaldi-style specifiers (formats/table_specifier.h), pipes included
// (formats/table_entries.h).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "formats/kaldi_io.h"
#include "formats/table_entries.h"
#include "util/matrix.h"

namespace gmmscore {

class MatrixTableReader {
 public:
  static absl::StatusOr<std::unique_ptr<MatrixTableReader>> Open(const std::string& rspecifier);
  virtual ~MatrixTableReader() = default;
  // Reads the next entry into key and value; returns false at the end of the table.
  virtual absl::StatusOr<bool> Next(std::string* key, Matrix* value) = 0;
};

class MatrixTableWriter {
 public:
  // `reals`: how text tables (",t") print the values (formats/kaldi_io.h).
  static absl::StatusOr<std::unique_ptr<MatrixTableWriter>> Open(
      const std::string& wspecifier, TextReals reals = TextReals::kShortest);
  absl::Status Write(const std::string& key, const Matrix& value);
  // Flushes and closes; fails where a write or a pipe's command failed. The destructor closes a
  // writer that was not closed, ignoring errors.
  absl::Status Close() { return entries_->Close(); }
  // Where the output goes, for messages: "scores.ark" or "stdout".
  const std::string& description() const { return entries_->description(); }

 private:
  MatrixTableWriter(std::unique_ptr<TableEntryWriter> entries, TextReals reals)
      : entries_(std::move(entries)), reals_(reals) {}
  std::unique_ptr<TableEntryWriter> entries_;
  TextReals reals_;
};

// One matrix object from a whole file (Kaldi's ReadKaldiObject through an rxfilename): binary or
// text, float, double or compressed.
absl::StatusOr<Matrix> ReadMatrixFile(const std::string& rxfilename);

// One matrix object to a whole file (Kaldi's WriteKaldiObject through a wxfilename).
absl::Status WriteMatrixFile(const Matrix& m, const std::string& wxfilename, bool binary,
                             TextReals reals = TextReals::kShortest);

}  // namespace gmmscore

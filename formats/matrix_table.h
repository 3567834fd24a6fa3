// Sequential reading and writing of keyed float matrices (feature archives in, score archives
// out) through Kaldi-style specifiers (formats/table_specifier.h).
#pragma once

#include <fstream>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "formats/table_specifier.h"
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
  static absl::StatusOr<std::unique_ptr<MatrixTableWriter>> Open(const std::string& wspecifier);
  ~MatrixTableWriter();
  absl::Status Write(const std::string& key, const Matrix& value);
  absl::Status Close();
  // Where the output goes, for messages: "scores.ark" or "stdout".
  const std::string& description() const { return description_; }

 private:
  MatrixTableWriter() = default;
  TableSpecifier spec_;
  std::ofstream file_;
  std::ostream* archive_ = nullptr;
  std::ofstream script_;
  std::string description_;
  bool closed_ = false;
};

}  // namespace gmmscore

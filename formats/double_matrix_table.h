// Tables of Kaldi Matrix<double> objects (DoubleMatrixWriter / SequentialDoubleMatrixReader):
// CMVN statistics as compute-cmvn-stats writes them and apply-cmvn reads them. Entries are written
// as "DM" (binary) or Kaldi's text matrix; float ("FM") entries are read too, as Kaldi reads them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "formats/table_entries.h"

namespace gmmscore {

struct DoubleMatrix {
  int32_t rows = 0;
  int32_t cols = 0;
  std::vector<double> data;  // row-major

  DoubleMatrix() = default;
  DoubleMatrix(int32_t r, int32_t c) : rows(r), cols(c), data(size_t(r) * size_t(c), 0.0) {}
  double& at(int32_t r, int32_t c) { return data[size_t(r) * cols + c]; }
  double at(int32_t r, int32_t c) const { return data[size_t(r) * cols + c]; }
};

class DoubleMatrixTableWriter {
 public:
  static absl::StatusOr<std::unique_ptr<DoubleMatrixTableWriter>> Open(
      const std::string& wspecifier);
  absl::Status Write(const std::string& key, const DoubleMatrix& value);
  absl::Status Close() { return entries_->Close(); }

 private:
  explicit DoubleMatrixTableWriter(std::unique_ptr<TableEntryWriter> entries)
      : entries_(std::move(entries)) {}
  std::unique_ptr<TableEntryWriter> entries_;
};

class DoubleMatrixTableReader {
 public:
  static absl::StatusOr<std::unique_ptr<DoubleMatrixTableReader>> Open(
      const std::string& rspecifier);
  // Reads the next entry; returns false at the end of the table.
  absl::StatusOr<bool> Next(std::string* key, DoubleMatrix* value);

 private:
  explicit DoubleMatrixTableReader(std::unique_ptr<TableEntryReader> entries)
      : entries_(std::move(entries)) {}
  std::unique_ptr<TableEntryReader> entries_;
};

// One Matrix<double> object from a whole file (Kaldi's ReadKaldiObject: an rxfilename) and to one
// (WriteKaldiObject: a wxfilename).
absl::StatusOr<DoubleMatrix> ReadDoubleMatrixFile(const std::string& rxfilename);
absl::Status WriteDoubleMatrixFile(const DoubleMatrix& m, const std::string& wxfilename,
                                   bool binary);

}  // namespace gmmscore

// Features by utterance key, as Kaldi's RandomAccessBaseFloatMatrixReader gives them to
// gmm-align-compiled: a sequential table read forward as far as a key needs, the entries passed
// over kept until they are asked for (an archive in the same order as the requests keeps at most
// one entry in memory; "ark,s,cs:" is accepted and changes nothing here).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "formats/matrix_table.h"
#include "util/matrix.h"

namespace gmmscore {

class MatrixLookup {
 public:
  static absl::StatusOr<MatrixLookup> Open(const std::string& rspecifier);

  // The entry for key, taken out of the table (each key is asked for once); nullopt where the
  // table has no such key. Errors of the table (a truncated archive) are returned as they are.
  absl::StatusOr<std::optional<Matrix>> Take(const std::string& key);

 private:
  explicit MatrixLookup(std::unique_ptr<MatrixTableReader> reader) : reader_(std::move(reader)) {}

  std::unique_ptr<MatrixTableReader> reader_;
  std::map<std::string, Matrix> passed_;  // read before they were asked for
  bool at_end_ = false;
};

}  // namespace gmmscore

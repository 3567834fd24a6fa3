#include "formats/matrix_lookup.h"

#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<MatrixLookup> MatrixLookup::Open(const std::string& rspecifier) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableReader> reader,
                       MatrixTableReader::Open(rspecifier));
  return MatrixLookup(std::move(reader));
}

absl::StatusOr<std::optional<Matrix>> MatrixLookup::Take(const std::string& key) {
  if (auto it = passed_.find(key); it != passed_.end()) {
    Matrix value = std::move(it->second);
    passed_.erase(it);
    return std::optional<Matrix>(std::move(value));
  }
  while (!at_end_) {
    std::string next_key;
    Matrix value;
    GMM_ASSIGN_OR_RETURN(const bool more, reader_->Next(&next_key, &value));
    if (!more) {
      at_end_ = true;
      break;
    }
    if (next_key == key) return std::optional<Matrix>(std::move(value));
    passed_.insert_or_assign(std::move(next_key), std::move(value));
  }
  return std::optional<Matrix>();
}

}  // namespace gmmscore

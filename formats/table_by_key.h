// A whole table read into memory by key, for tools that look entries of one table up while they
// walk another (gmm-est-fmllr's posteriors per utterance, compose-transforms' per-speaker
// matrices, align --fmllr's first-pass alignments). A key that repeats keeps its last value.
// Reader is one of the table readers (formats/matrix_table.h, formats/kaldi_tables.h): Open
// gives a std::unique_ptr<Reader>, Next(&key, &value) a StatusOr<bool> that is false at the end.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "util/status_macros.h"

namespace gmmscore {

template <typename Reader, typename Value>
absl::StatusOr<std::map<std::string, Value>> ReadTableByKey(const std::string& rspecifier) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<Reader> reader, Reader::Open(rspecifier));
  std::map<std::string, Value> by_key;
  std::string key;
  Value value;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&key, &value));
    if (!more) return by_key;
    by_key[key] = std::move(value);
  }
}

}  // namespace gmmscore

// Text symbol tables ("SYMBOL ID" a line: phones.txt, words.txt), read by OpenFst's
// SymbolTable::ReadText as Kaldi's tools read them, so that the same files are accepted, the same
// refused, and OpenFst's own message says what is wrong with a line.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace gmmscore {

class SymbolNames {
 public:
  // Reads a symbol table from a file (not an rxfilename: Kaldi opens these as plain files). An
  // error names the file where it cannot be read, has a bad line, or holds no symbols.
  static absl::StatusOr<SymbolNames> ReadText(const std::string& path);
  // The symbol of an id, or "" where there is none (OpenFst's Find).
  std::string Find(int64_t id) const;

 private:
  std::map<int64_t, std::string> names_;
};

}  // namespace gmmscore

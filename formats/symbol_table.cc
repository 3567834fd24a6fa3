#include "formats/symbol_table.h"

#include <fst/symbol-table.h>

#include <fstream>
#include <memory>

#include "absl/strings/str_cat.h"

namespace gmmscore {

absl::StatusOr<SymbolNames> SymbolNames::ReadText(const std::string& path) {
  std::ifstream is(path);
  const std::unique_ptr<fst::SymbolTable> table(fst::SymbolTable::ReadText(is, path));
  if (table == nullptr || table->NumSymbols() == 0) {
    return absl::InvalidArgumentError(absl::StrCat("Error opening symbol table file ", path));
  }
  SymbolNames names;
  for (const auto& item : *table) {
    names.names_.emplace(item.Label(), table->Find(item.Label()));
  }
  return names;
}

std::string SymbolNames::Find(int64_t id) const {
  const auto it = names_.find(id);
  return it == names_.end() ? std::string() : it->second;
}

}  // namespace gmmscore

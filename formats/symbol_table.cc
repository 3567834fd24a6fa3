#include "formats/symbol_table.h"

#include <utility>
#include <vector>

#include "fst/openfst.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<SymbolNames> SymbolNames::ReadText(const std::string& path) {
  GMM_ASSIGN_OR_RETURN(const OpenFstFunctions* openfst, OpenFst());
  std::vector<std::pair<int64_t, std::string>> symbols;
  std::string error;
  if (!openfst->read_symbol_table(path, &symbols, &error)) {
    return absl::InvalidArgumentError(error);
  }
  SymbolNames names;
  for (auto& [id, symbol] : symbols) names.names_.emplace(id, std::move(symbol));
  return names;
}

std::string SymbolNames::Find(int64_t id) const {
  const auto it = names_.find(id);
  return it == names_.end() ? std::string() : it->second;
}

}  // namespace gmmscore

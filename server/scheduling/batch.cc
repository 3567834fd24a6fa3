#include "server/scheduling/batch.h"

#include "absl/strings/str_cat.h"

namespace gmmscore::server {

std::shared_ptr<const ModelSet> ModelSet::Make(std::vector<std::shared_ptr<ModelEntry>> models) {
  auto set = std::make_shared<ModelSet>();
  for (const auto& m : models) {
    absl::StrAppend(&set->key, set->key.empty() ? "" : "+", m->name(), "@", m->version());
  }
  set->models = std::move(models);
  return set;
}

std::vector<Matrix> CopyScores(const WindowScores& scores) {
  std::vector<Matrix> copies;
  copies.reserve(scores.size());
  for (const MatrixView& v : scores) copies.push_back(v.Copy());
  return copies;
}

WindowScores ViewScores(const std::vector<Matrix>& scores) {
  return WindowScores(scores.begin(), scores.end());
}

}  // namespace gmmscore::server

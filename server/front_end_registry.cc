#include "server/front_end_registry.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "feat/online_front_end.h"
#include "server/config.h"
#include "util/status_macros.h"

namespace gmmscore::server {

absl::Status FrontEndRegistry::Load(const std::string& name, const std::string& path) {
  GMM_RETURN_IF_ERROR(ValidateModelName(name));
  GMM_ASSIGN_OR_RETURN(FrontEndOptions opts, ReadFrontEndConfig(path));
  // A stream's front end must be able to stream: no per-utterance or per-speaker CMVN.
  if (absl::Status s = OnlineFrontEnd::Create(opts, 0).status(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", s.message()));
  }
  std::lock_guard lock(mu_);
  front_ends_[name] = std::make_shared<const FrontEndOptions>(opts);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const FrontEndOptions>> FrontEndRegistry::Find(
    const std::string& name) {
  // Checked before the name goes into a path or a message: no separators, no long names.
  if (absl::Status s = ValidateModelName(name); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("front end: ", s.message()));
  }
  {
    std::lock_guard lock(mu_);
    if (const auto it = front_ends_.find(name); it != front_ends_.end()) return it->second;
  }
  const std::filesystem::path file = std::filesystem::path(model_root_) / (name + ".conf");
  if (model_root_.empty() || !std::filesystem::is_regular_file(file)) {
    return absl::NotFoundError(absl::StrCat("no front end '", name, "' (gmmscored --front-end, or ",
                                            name, ".conf under --model-root)"));
  }
  GMM_RETURN_IF_ERROR(Load(name, file.string()));
  std::lock_guard lock(mu_);
  return front_ends_.at(name);
}

}  // namespace gmmscore::server

#include "server/model_registry.h"

#include <cstdio>
#include <filesystem>
#include <new>

#include "absl/strings/str_cat.h"
#include "formats/model_io.h"
#include "server/scheduling/lane_set.h"
#include "util/status_macros.h"

namespace gmmscore::server {

ModelRegistry::ModelRegistry(const ServerConfig& config, LaneSet* lanes, Metrics* metrics,
                             ServingChanged serving_changed)
    : config_(config),
      lanes_(lanes),
      metrics_(metrics),
      serving_changed_(std::move(serving_changed)) {}

absl::StatusOr<std::string> ModelRegistry::ResolveUnderRoot(const std::string& relative) const {
  namespace fs = std::filesystem;
  if (config_.model_root.empty()) {
    return absl::FailedPreconditionError(
        "loading models at run time is disabled: start gmmscored with --model-root");
  }
  const fs::path rel(relative);
  if (relative.empty() || rel.is_absolute()) {
    return absl::PermissionDeniedError(
        absl::StrCat("model path '", relative, "' must be relative to --model-root"));
  }
  for (const fs::path& part : rel) {
    if (part == "..") {
      return absl::PermissionDeniedError(
          absl::StrCat("model path '", relative, "' must not contain '..'"));
    }
  }
  std::error_code ec;
  const fs::path root = fs::canonical(config_.model_root, ec);
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat("--model-root ", config_.model_root, ": ", ec.message()));
  }
  // Symbolic links inside the root may point anywhere; the resolved path decides.
  const fs::path resolved = fs::weakly_canonical(root / rel, ec);
  if (ec) {
    return absl::NotFoundError(absl::StrCat("model path '", relative, "': ", ec.message()));
  }
  const std::string root_str = root.string();
  const std::string resolved_str = resolved.string();
  if (resolved_str.size() <= root_str.size() ||
      resolved_str.compare(0, root_str.size(), root_str) || resolved_str[root_str.size()] != '/') {
    return absl::PermissionDeniedError(
        absl::StrCat("model path '", relative, "' resolves outside --model-root"));
  }
  return resolved_str;
}

absl::StatusOr<v1::ModelInfo> ModelRegistry::Load(const std::string& name, const std::string& path,
                                                  bool replace) {
  return Install(name, path, replace, [&]() -> absl::StatusOr<Built> {
    GMM_ASSIGN_OR_RETURN(LoadedModel loaded, LoadModel(path));
    return Built{std::move(loaded.model), ModelFormatName(loaded.file_format)};
  });
}

absl::StatusOr<v1::ModelInfo> ModelRegistry::Add(const std::string& name, GmmModel model,
                                                 const std::string& origin, bool replace) {
  return Install(name, origin, replace, [&]() -> absl::StatusOr<Built> {
    return Built{std::move(model), "adapted"};
  });
}

absl::StatusOr<v1::ModelInfo> ModelRegistry::Install(
    const std::string& name, const std::string& path, bool replace,
    absl::FunctionRef<absl::StatusOr<Built>()> build) {
  GMM_RETURN_IF_ERROR(ValidateModelName(name));
  {
    std::lock_guard lock(mu_);
    if (loading_.count(name)) {
      return absl::AbortedError(absl::StrCat("model '", name, "' is being loaded already"));
    }
    const bool exists = ready_.count(name) > 0;
    if (exists && !replace) {
      return absl::AlreadyExistsError(
          absl::StrCat("model '", name, "' is loaded; set replace to load a new version"));
    }
    loading_[name] = path;
    // A replacement keeps the old version serving until the new one is ready.
    if (!exists) serving_changed_(name, false);
  }
  absl::StatusOr<Built> built = absl::CancelledError("not read");
  absl::StatusOr<std::vector<Residency>> residents = absl::CancelledError("not made resident");
  // A model too large for this machine's memory fails its load, not the daemon.
  try {
    built = build();
    if (built.ok()) residents = lanes_->MakeResidents(built->model);
  } catch (const std::bad_alloc&) {
    const absl::Status oom =
        absl::ResourceExhaustedError(absl::StrCat("out of memory loading ", path));
    if (built.ok()) {
      residents = oom;
    } else {
      built = oom;
    }
  }

  std::lock_guard lock(mu_);
  loading_.erase(name);
  if (!built.ok() || !residents.ok()) {
    const absl::Status& s = built.ok() ? residents.status() : built.status();
    return absl::Status(s.code(), absl::StrCat("model '", name, "': ", s.message()));
  }
  auto entry = std::make_shared<ModelEntry>(
      name, ++last_version_[name], path, built->format,
      std::make_shared<const GmmModel>(std::move(built->model)), *std::move(residents), metrics_);
  if (auto old = ready_.find(name); old != ready_.end()) retired_.push_back(old->second);
  ready_[name] = entry;
  serving_changed_(name, true);
  return entry->Info(v1::ModelInfo::READY);
}

absl::StatusOr<v1::ModelInfo> ModelRegistry::Unload(const std::string& name) {
  std::shared_ptr<ModelEntry> entry;
  {
    std::lock_guard lock(mu_);
    const auto it = ready_.find(name);
    if (it == ready_.end()) {
      if (loading_.count(name)) {
        return absl::FailedPreconditionError(
            absl::StrCat("model '", name, "' is loading; unload it once it is ready"));
      }
      return absl::NotFoundError(absl::StrCat("no model '", name, "'"));
    }
    entry = std::move(it->second);
    ready_.erase(it);
    retired_.push_back(entry);
    serving_changed_(name, false);
  }
  // Streams (and windows queued for scoring) hold their own references; ours is the last one
  // only when nothing uses the model, and then it is freed on return.
  const bool in_use = entry.use_count() > 1;
  return entry->Info(in_use ? v1::ModelInfo::UNLOADING : v1::ModelInfo::UNLOADED);
}

absl::StatusOr<std::shared_ptr<ModelEntry>> ModelRegistry::Acquire(const std::string& name) const {
  std::lock_guard lock(mu_);
  if (const auto it = ready_.find(name); it != ready_.end()) return it->second;
  if (loading_.count(name)) {
    return absl::UnavailableError(absl::StrCat("model '", name, "' is loading"));
  }
  return absl::NotFoundError(absl::StrCat("no model '", name, "' on this server"));
}

absl::StatusOr<v1::ModelInfo> ModelRegistry::Get(const std::string& name) {
  std::lock_guard lock(mu_);
  if (const auto it = ready_.find(name); it != ready_.end()) {
    return it->second->Info(v1::ModelInfo::READY);
  }
  if (const auto it = loading_.find(name); it != loading_.end()) {
    v1::ModelInfo info;
    info.set_name(name);
    info.set_status(v1::ModelInfo::LOADING);
    info.set_path(it->second);
    return info;
  }
  return absl::NotFoundError(absl::StrCat("no model '", name, "'"));
}

void ModelRegistry::PruneRetired() {
  std::erase_if(retired_, [](const std::weak_ptr<ModelEntry>& w) { return w.expired(); });
}

std::vector<v1::ModelInfo> ModelRegistry::List() {
  std::lock_guard lock(mu_);
  PruneRetired();
  std::vector<v1::ModelInfo> out;
  for (const auto& [name, entry] : ready_) out.push_back(entry->Info(v1::ModelInfo::READY));
  for (const auto& [name, path] : loading_) {
    if (ready_.count(name)) continue;  // a replacement in progress: the ready one is listed
    v1::ModelInfo& info = out.emplace_back();
    info.set_name(name);
    info.set_status(v1::ModelInfo::LOADING);
    info.set_path(path);
  }
  for (const std::weak_ptr<ModelEntry>& weak : retired_) {
    if (std::shared_ptr<ModelEntry> entry = weak.lock()) {
      out.push_back(entry->Info(v1::ModelInfo::UNLOADING));
    }
  }
  return out;
}

}  // namespace gmmscore::server

// The front ends audio streams name (AudioConfig.front_end): configs given at start with
// --front-end NAME=FILE, and NAME.conf files under --model-root, read on first use. Each is a
// gmmscore compute-feats config (feat/front_end_options.h), checked when read; a stream gets a
// shared, immutable copy. Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "feat/front_end_options.h"

namespace gmmscore::server {

class FrontEndRegistry {
 public:
  explicit FrontEndRegistry(std::string model_root) : model_root_(std::move(model_root)) {}

  // Reads FILE as front end NAME (at start: errors name the file and line).
  absl::Status Load(const std::string& name, const std::string& path);
  // The front end NAME: NOT_FOUND where it was not loaded and --model-root has no NAME.conf;
  // INVALID_ARGUMENT for a bad name or a bad file (naming its line).
  absl::StatusOr<std::shared_ptr<const FrontEndOptions>> Find(const std::string& name);

 private:
  const std::string model_root_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const FrontEndOptions>> front_ends_;
};

}  // namespace gmmscore::server

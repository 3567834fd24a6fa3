// The models the daemon serves, by name: loaded at start (--model NAME=PATH) or at run time
// (ModelAdmin.LoadModel, paths confined to --model-root), each whole (GMMs and HMM) and resident
// on each of the configured backend's devices. Entries are shared: a stream holds its models'
// entries from its StreamConfig to its end, so unloading or replacing a model never pulls it from
// under a stream. The stream keeps scoring with the version it started with; the memory is freed
// when the last user lets go.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "gmmscore/v1/model_admin.pb.h"
#include "model/gmm_model.h"
#include "server/config.h"
#include "server/metrics.h"
#include "server/model_entry.h"

namespace gmmscore::server {

class LaneSet;

class ModelRegistry {
 public:
  // Told when a model name starts or stops serving (the health service's per-model status).
  using ServingChanged = std::function<void(const std::string& name, bool serving)>;

  // Models are made resident on every device of lanes.
  ModelRegistry(const ServerConfig& config, LaneSet* lanes, Metrics* metrics,
                ServingChanged serving_changed);

  // Reads and packs a model (seconds for a large one: callers keep this off gRPC threads).
  // An existing name needs replace; the new version serves new streams once ready.
  absl::StatusOr<v1::ModelInfo> Load(const std::string& name, const std::string& path,
                                     bool replace);
  // Maps a ModelAdmin path to a file under --model-root: relative, no "..", and after resolving
  // symbolic links still inside the root.
  absl::StatusOr<std::string> ResolveUnderRoot(const std::string& relative) const;
  // Serves a model built in memory (ModelAdmin.AdaptModel's) under name as Load serves a file's:
  // resident on every device, a new version of an existing name where replace. origin is what
  // ModelInfo.path says of it ("adapted from mono v1").
  absl::StatusOr<v1::ModelInfo> Add(const std::string& name, GmmModel model,
                                    const std::string& origin, bool replace);
  absl::StatusOr<v1::ModelInfo> Unload(const std::string& name);

  // The ready entry for a stream: NOT_FOUND for an unknown name, UNAVAILABLE while loading.
  absl::StatusOr<std::shared_ptr<ModelEntry>> Acquire(const std::string& name) const;
  absl::StatusOr<v1::ModelInfo> Get(const std::string& name);
  // Ready and loading models, and unloaded ones still used by streams, by name.
  std::vector<v1::ModelInfo> List();

 private:
  struct Built {
    GmmModel model;
    std::string format;  // ModelInfo.format: "kaldi", ..., "adapted"
  };
  // What Load and Add share: build runs off the lock, then the model is made resident and
  // registered.
  absl::StatusOr<v1::ModelInfo> Install(const std::string& name, const std::string& path,
                                        bool replace,
                                        absl::FunctionRef<absl::StatusOr<Built>()> build);
  void PruneRetired();  // with mu_ held

  const ServerConfig& config_;
  LaneSet* const lanes_;
  Metrics* const metrics_;
  const ServingChanged serving_changed_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<ModelEntry>> ready_;
  std::map<std::string, std::string> loading_;  // name -> path
  std::map<std::string, int64_t> last_version_;
  // Unloaded or replaced entries, listed as UNLOADING while streams still hold them.
  std::vector<std::weak_ptr<ModelEntry>> retired_;
};

}  // namespace gmmscore::server

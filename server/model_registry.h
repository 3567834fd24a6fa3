// The models the daemon serves, by name: loaded at start (--model NAME=PATH) or at run time
// (ModelAdmin.LoadModel, paths confined to --model-root), each whole (GMMs and HMM) and resident
// on each of the configured backend's devices. Entries are shared: a stream holds its models'
// entries from its StreamConfig to its end, so unloading or replacing a model never pulls it from
// under a stream. The stream keeps scoring with the version it started with; the memory is freed
// when the last user lets go.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "gmmscore/v1/model_admin.pb.h"
#include "kernels/compute_device.h"
#include "model/gmm_model.h"
#include "server/config.h"
#include "server/metrics.h"
#include "server/rpc/health.h"

namespace gmmscore::server {

class LaneSet;

// A model resident on one device (or, for the CPU's lanes, on all of them).
struct Residency {
  std::unique_ptr<ResidentModel> model;
  std::string device;  // "cpu", "cuda:0"
};

class ModelEntry {
 public:
  // residents: the model on each device (Lane::residency_index order).
  ModelEntry(std::string name, int64_t version, std::string path, std::string format,
             std::shared_ptr<const GmmModel> model, std::vector<Residency> residents,
             Metrics* metrics);
  ~ModelEntry();
  ModelEntry(const ModelEntry&) = delete;
  ModelEntry& operator=(const ModelEntry&) = delete;

  const std::string& name() const { return name_; }
  int64_t version() const { return version_; }
  // The whole model: GMMs and, where the file had one, the HMM (alignment needs it).
  const GmmModel& model() const { return *model_; }
  const ResidentModel& resident(int32_t index) const { return *residents_[size_t(index)].model; }
  int32_t num_states() const { return model_->num_states(); }
  int32_t dim() const { return model_->dim(); }
  // Streams that have this entry in their configuration, now.
  std::atomic<int32_t>& active_streams() { return active_streams_; }
  v1::ModelInfo Info(v1::ModelInfo::Status status) const;

 private:
  const std::string name_;
  const int64_t version_;
  const std::string path_;
  const std::string format_;
  const std::shared_ptr<const GmmModel> model_;
  const std::vector<Residency> residents_;
  Metrics* const metrics_;
  std::vector<prometheus::Gauge*> bytes_gauges_;  // per resident
  std::atomic<int32_t> active_streams_{0};
};

class ModelRegistry {
 public:
  // Models are made resident on every device of lanes.
  ModelRegistry(const ServerConfig& config, LaneSet* lanes, Metrics* metrics, HealthStatus* health);

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
  HealthStatus* const health_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<ModelEntry>> ready_;
  std::map<std::string, std::string> loading_;  // name -> path
  std::map<std::string, int64_t> last_version_;
  // Unloaded or replaced entries, listed as UNLOADING while streams still hold them.
  std::vector<std::weak_ptr<ModelEntry>> retired_;
};

}  // namespace gmmscore::server

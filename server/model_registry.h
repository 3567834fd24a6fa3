// The models the daemon serves, by name: loaded at start (--model NAME=PATH) or at run time
// (ModelAdmin.LoadModel, paths confined to --model-root), each with a scorer of the configured
// backend, on each of its devices. Entries are shared: a stream holds its models' entries from its
// StreamConfig to its end, so unloading or replacing a model never pulls it from under a stream.
// The stream keeps scoring with the version it started with; the memory is freed when the last user
// lets go.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gmmscore/v1/model_admin.pb.h"
#include "kernels/model/gmm_model.h"
#include "kernels/scorer.h"
#include "server/config.h"
#include "server/health.h"
#include "server/metrics.h"

namespace gmmscore::server {

class Backend;

// A model's scorer on one device.
struct ResidentScorer {
  std::unique_ptr<Scorer> scorer;
  std::string device;  // "cpu", "cuda:0"
  int64_t bytes = 0;   // memory it holds there (parameters and its own buffers)
};

class ModelEntry {
 public:
  // scorers: one per device the backend scores on (ScoringLane::scorer_index order), all of the
  // same model.
  ModelEntry(std::string name, int64_t version, std::string path, std::string format,
             std::vector<ResidentScorer> scorers, int64_t num_gauss, Metrics* metrics);
  ~ModelEntry();
  ModelEntry(const ModelEntry&) = delete;
  ModelEntry& operator=(const ModelEntry&) = delete;

  const std::string& name() const { return name_; }
  int64_t version() const { return version_; }
  const Scorer& scorer(int32_t index) const { return *scorers_[size_t(index)].scorer; }
  int32_t num_states() const { return scorer(0).num_states(); }
  int32_t dim() const { return scorer(0).dim(); }
  // Streams that have this entry in their configuration, now.
  std::atomic<int32_t>& active_streams() { return active_streams_; }
  v1::ModelInfo Info(v1::ModelInfo::Status status) const;

 private:
  const std::string name_;
  const int64_t version_;
  const std::string path_;
  const std::string format_;
  const std::vector<ResidentScorer> scorers_;
  const int64_t num_gauss_;
  Metrics* const metrics_;
  std::vector<prometheus::Gauge*> bytes_gauges_;  // per scorer
  std::atomic<int32_t> active_streams_{0};
};

class ModelRegistry {
 public:
  // Models are made resident on every device of backend.
  ModelRegistry(const ServerConfig& config, Backend* backend, Metrics* metrics,
                HealthStatus* health);

  // Reads and packs a model (seconds for a large one: callers keep this off gRPC threads).
  // An existing name needs replace; the new version serves new streams once ready.
  absl::StatusOr<v1::ModelInfo> Load(const std::string& name, const std::string& path,
                                     bool replace);
  // Maps a ModelAdmin path to a file under --model-root: relative, no "..", and after resolving
  // symbolic links still inside the root.
  absl::StatusOr<std::string> ResolveUnderRoot(const std::string& relative) const;
  absl::StatusOr<v1::ModelInfo> Unload(const std::string& name);

  // The ready entry for a stream: NOT_FOUND for an unknown name, UNAVAILABLE while loading.
  absl::StatusOr<std::shared_ptr<ModelEntry>> Acquire(const std::string& name) const;
  absl::StatusOr<v1::ModelInfo> Get(const std::string& name);
  // Ready and loading models, and unloaded ones still used by streams, by name.
  std::vector<v1::ModelInfo> List();

 private:
  void PruneRetired();  // with mu_ held

  const ServerConfig& config_;
  Backend* const backend_;
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

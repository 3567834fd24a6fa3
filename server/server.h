// The gmmscored server as an object: gRPC services (Scorer, ModelAdmin, health, reflection), the
// model registry, the batcher, the metrics endpoint. main.cc runs one until SIGTERM; tests run
// one in-process on a loopback port.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>

#include "absl/status/statusor.h"
#include "server/config.h"
#include "server/front_end_registry.h"
#include "server/metrics.h"
#include "server/model_registry.h"
#include "server/rpc/call_queues.h"
#include "server/rpc/health.h"
#include "server/rpc/model_admin_service.h"
#include "server/rpc/scorer_service.h"
#include "server/rpc/stream_session.h"
#include "server/scheduling/batcher.h"
#include "server/scheduling/lane_set.h"
#include "server/scheduling/task_queue.h"
#include "server/scheduling/timer_queue.h"
#include "server/scheduling/viterbi_queue.h"

namespace gmmscore::server {

class GmmscoreServer {
 public:
  // Listens and serves at once, health NOT_SERVING until LoadStartupModels has loaded
  // config.models. Errors name the flag (listen address, TLS files, token file).
  static absl::StatusOr<std::unique_ptr<GmmscoreServer>> Start(ServerConfig config);
  ~GmmscoreServer();  // Drain(0) unless drained already
  GmmscoreServer(const GmmscoreServer&) = delete;
  GmmscoreServer& operator=(const GmmscoreServer&) = delete;

  // Loads the --model models in order, then reports SERVING; the first failure is returned.
  absl::Status LoadStartupModels();
  // SIGTERM: health NOT_SERVING, new streams refused (UNAVAILABLE), open streams stop reading and
  // get every frame read scored and sent, then gRPC shuts down; streams still open at the
  // deadline are cancelled. True when every stream ended in time.
  bool Drain(absl::Duration timeout);

  int port() const { return port_; }
  int metrics_port() const { return metrics_.port(); }
  ModelRegistry& registry() { return *registry_; }
  Metrics& metrics() { return metrics_; }
  int32_t open_streams() { return tracker_.size(); }

 private:
  explicit GmmscoreServer(ServerConfig config);

  const ServerConfig config_;
  // Before the batcher: an Align call that failed may still have windows there, and counts
  // itself out when the last of them comes back.
  std::atomic<int32_t> alignments_in_progress_{0};
  Metrics metrics_;
  HealthStatus health_;
  TimerQueue timers_;
  // Made in Start (the lanes can fail: --backend cuda without a GPU); destroyed in reverse:
  // the batcher waits for its batches in flight before the lanes and models go.
  std::unique_ptr<LaneSet> lanes_;
  std::unique_ptr<ModelRegistry> registry_;
  std::unique_ptr<FrontEndRegistry> front_ends_;
  std::unique_ptr<Batcher> batcher_;
  SessionTracker tracker_;
  TaskQueue loader_{1, "model-load"};  // after the registry, before the services that post to it
  // The GPUs' Viterbi for Align calls (none on the CPU backend); before the align workers, which
  // submit to it.
  std::unique_ptr<ViterbiQueue> viterbi_queue_;
  std::unique_ptr<TaskQueue> align_workers_;  // Align calls' checks and CPU Viterbi
  std::unique_ptr<KeptFrames> kept_frames_;   // before the services that use it
  std::unique_ptr<ScorerService> scorer_service_;
  std::unique_ptr<ModelAdminService> admin_service_;
  // The Score calls' queues: shut down after the server, destroyed after it.
  std::unique_ptr<CallQueues> score_queues_;
  std::unique_ptr<grpc::Server> server_;  // last: shut down and destroyed first
  int port_ = 0;
  bool drained_ = false;
};

}  // namespace gmmscore::server

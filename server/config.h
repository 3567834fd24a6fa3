// Everything gmmscored can be told, as one value: filled from the command line by flags.cc, or
// directly by tests that run the server in-process. Defaults here are the documented defaults.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace gmmscore::server {

struct ModelSpec {
  std::string name;
  std::string path;
};

// Per-stream limits and defaults (StreamSession).
struct StreamLimits {
  int32_t default_window_frames = 10;
  int32_t max_window_frames = 1000;
  absl::Duration default_max_latency = absl::Milliseconds(100);
  absl::Duration max_latency_limit = absl::Seconds(10);
  int32_t max_frames_per_chunk = 1000;
  // What one StreamConfig may ask for, bounded before anything is allocated: models fused (the
  // GPU fuses at most 8), frames the select rule sums (its running sums are models x window),
  // and the largest response a window may make (gRPC clients refuse more than 4 MiB by default).
  int32_t max_models_per_stream = 8;
  int32_t max_select_window = 10000;
  int32_t max_response_bytes = 4 << 20;
  // Windows of one stream that are queued for scoring or waiting to be written, together; the
  // stream stops reading (and gRPC flow control stops its client) while this many are out.
  int32_t max_stream_windows = 8;
  absl::Duration idle_timeout = absl::Seconds(30);            // 0: none
  absl::Duration max_stream_duration = absl::ZeroDuration();  // 0: none
};

// The Align RPC: what one call may ask for, how many run at once, and the windows its frames are
// scored in (batched with the streams' windows).
struct AlignLimits {
  int32_t max_frames = 360000;  // an hour at 100 frames/s
  int32_t max_graph_arcs = 1 << 23;
  int32_t max_concurrent = 64;
  int32_t window_frames = 1000;
  int32_t threads = 2;  // Viterbi worker threads
};

// ModelAdmin.AdaptModel: the frames one call may send and the calls that run at once.
struct AdaptLimits {
  int32_t max_frames = 360000;  // an hour at 100 frames/s
  int32_t max_concurrent = 2;
  // Frames streams keep for adaptation (StreamConfig.keep_frames): all streams together, and
  // how long after a stream ends.
  int64_t max_kept_bytes = int64_t(1) << 30;
  absl::Duration kept_ttl = absl::Minutes(10);
};

struct BatcherOptions {
  // Frames per backend call, windows of many streams; 0: the lanes' default, kGpuBatchFrames on
  // GPUs (twice the batches' frames take 4% off the daemon's CPU at 6000-10,000 streams:
  // docs/PERFORMANCE.md, "Larger batches on the GPU") and kCpuBatchFrames on the CPU, where a
  // batch takes longer to score and so holds its windows longer.
  int32_t max_batch_frames = 0;
  static constexpr int32_t kGpuBatchFrames = 1024;
  static constexpr int32_t kCpuBatchFrames = 512;
  // The most a batch takes from a queue that holds more than max_batch_frames (one that fell
  // behind, its lanes busy); 0 or less than max_batch_frames: max_batch_frames. The lanes' buffers
  // are sized for the larger of the two. Off by default: it pays where batches are the limit
  // (BEAM_SPARSE's small responses) and costs where delivering the responses is (16-bit rows of
  // thousands of states): docs/PERFORMANCE.md, "The transport's floor, and catching up".
  int32_t catch_up_batch_frames = 0;
  absl::Duration max_queue_delay = absl::Milliseconds(2);
  int32_t workers = 1;  // CPU lanes
  // Threads that copy scored windows out of batches, fuse and encode them; 0: a quarter of the
  // hardware threads, at least 2.
  int32_t delivery_threads = 0;
};

struct ServerConfig {
  std::string listen = "0.0.0.0:50051";
  std::string metrics_listen;  // empty: no metrics endpoint
  std::vector<ModelSpec> models;
  std::string model_root;             // empty: ModelAdmin.LoadModel is refused
  std::vector<ModelSpec> front_ends;  // NAME=FILE of audio streams' front-end configs
  std::string backend = "cpu";
  std::string devices = "all";  // GPUs for --backend cuda|auto: "all" or "0,1"
  int32_t scorer_threads = 0;   // 0: all hardware threads
  int32_t max_streams = 256;
  int32_t max_message_bytes = 4 << 20;
  int32_t stream_window_bytes = 256 << 10;  // HTTP/2 receive window per stream
  // Completion queues, one thread each, that run the Score streams' reads, writes and reactions;
  // 0: one per hardware thread.
  int32_t stream_threads = 0;
  absl::Duration drain_timeout = absl::Seconds(30);
  StreamLimits stream;
  AlignLimits align;
  AdaptLimits adapt;
  BatcherOptions batcher;
  // Transport security: either plaintext, or a certificate and key (and optionally a client CA,
  // which makes clients present certificates it signed).
  bool plaintext = false;
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;
  std::string admin_token_file;  // empty: ModelAdmin mutations are refused
};

// Checks ranges and combinations; the message names the flag.
absl::Status ValidateConfig(const ServerConfig& config);

// Parses "NAME=PATH"; NAME is 1-128 of [A-Za-z0-9._-].
absl::Status ParseModelSpec(const std::string& text, ModelSpec* spec);
absl::Status ValidateModelName(const std::string& name);

}  // namespace gmmscore::server

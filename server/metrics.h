// The daemon's Prometheus metrics (prometheus-cpp), all prefixed gmmscore_, in base units
// (seconds, bytes, frames). Served on --metrics-listen at /metrics when that is set; always
// collected, so tests can read them in-process.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace gmmscore::server {

// Reasons a stream ended with an error, the `reason` label of gmmscore_stream_failures_total.
enum class FailureReason {
  kProtocol,         // FAILED_PRECONDITION: message order (no config first, frames after End)
  kInvalidArgument,  // bad config or features
  kUnknownModel,
  kModelLoading,
  kTooManyStreams,
  kIdleTimeout,
  kMaxDuration,
  kCancelled,
  kDraining,
  kInternal,
};
const char* FailureReasonLabel(FailureReason reason);

class Metrics {
  // First member: every metric below lives in it, so it is built before them.
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();

 public:
  Metrics();
  // Starts the HTTP endpoint (GET /metrics) on host:port; port 0 picks a free one.
  absl::Status Serve(const std::string& listen);
  int port() const;  // 0 when not serving
  prometheus::Registry& registry() { return *registry_; }

  prometheus::Gauge& active_streams;
  prometheus::Gauge& buffered_bytes;
  prometheus::Counter& windows_sent;
  prometheus::Counter& stream_messages_sent;
  prometheus::Histogram& batch_frames;
  prometheus::Histogram& queue_wait_seconds;
  prometheus::Histogram& compute_seconds;
  prometheus::Histogram& window_latency_seconds;
  // window_latency_seconds in two stages (gmmscore_window_stage_seconds{stage}): from the last
  // frame read to the response handed to gRPC (cut, queue, compute, copy out, fuse, encode, and
  // waiting for the window before it), and from there to gRPC's write completing (flow control
  // and a slow client show here).
  prometheus::Histogram& before_write_seconds;
  prometheus::Histogram& write_seconds;

  prometheus::Counter& frames_received(const std::string& model) {
    return frames_received_.Add({{"model", model}});
  }
  prometheus::Counter& frames_scored(const std::string& model) {
    return frames_scored_.Add({{"model", model}});
  }
  // Per lane: "cpu", "cuda:0", ...
  prometheus::Counter& device_frames_scored(const std::string& device) {
    return device_frames_scored_.Add({{"device", device}});
  }
  // Seconds a lane's device had a batch in flight: its rate is the device's busy fraction.
  prometheus::Counter& device_busy_seconds(const std::string& device) {
    return device_busy_seconds_.Add({{"device", device}});
  }
  prometheus::Gauge& buffer_bytes(const std::string& device) {
    return buffer_bytes_.Add({{"device", device}});
  }
  void CountFailure(FailureReason reason) {
    failures_.Add({{"reason", FailureReasonLabel(reason)}}).Increment();
  }
  double failures(FailureReason reason) {
    return failures_.Add({{"reason", FailureReasonLabel(reason)}}).Value();
  }
  prometheus::Gauge& model_bytes(const std::string& model, int64_t version,
                                 const std::string& device) {
    return model_bytes_.Add(
        {{"model", model}, {"version", std::to_string(version)}, {"device", device}});
  }
  void RemoveModelBytes(prometheus::Gauge* gauge) { model_bytes_.Remove(gauge); }

 private:
  prometheus::Family<prometheus::Counter>& frames_received_;
  prometheus::Family<prometheus::Counter>& frames_scored_;
  prometheus::Family<prometheus::Counter>& device_frames_scored_;
  prometheus::Family<prometheus::Counter>& device_busy_seconds_;
  prometheus::Family<prometheus::Gauge>& buffer_bytes_;
  prometheus::Family<prometheus::Counter>& failures_;
  prometheus::Family<prometheus::Gauge>& model_bytes_;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace gmmscore::server

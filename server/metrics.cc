#include "server/metrics.h"

#include "absl/strings/str_cat.h"

namespace gmmscore::server {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;
using prometheus::Histogram;

// Latencies from a millisecond to seconds: a real-time window is 100 ms of audio.
const Histogram::BucketBoundaries kLatencyBuckets = {0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05,
                                                     0.1,    0.15,  0.2,   0.5,   1.0,  2.5,  5.0};
const Histogram::BucketBoundaries kFrameBuckets = {1,   2,   5,    10,   20,   50,   100,
                                                   200, 500, 1000, 2000, 5000, 10000};

// The family of both stage histograms: registering it twice returns the same family
// (prometheus-cpp merges families of one name and labels).
prometheus::Family<Histogram>& StageFamily(prometheus::Registry& registry) {
  return prometheus::BuildHistogram()
      .Name("gmmscore_window_stage_seconds")
      .Help(
          "gmmscore_window_latency_seconds in stages: before_write (last frame read to the "
          "response handed to gRPC), write (to gRPC's write completing)")
      .Register(registry);
}

}  // namespace

const char* FailureReasonLabel(FailureReason reason) {
  switch (reason) {
    case FailureReason::kProtocol:
      return "protocol";
    case FailureReason::kInvalidArgument:
      return "invalid_argument";
    case FailureReason::kUnknownModel:
      return "unknown_model";
    case FailureReason::kModelLoading:
      return "model_loading";
    case FailureReason::kTooManyStreams:
      return "too_many_streams";
    case FailureReason::kIdleTimeout:
      return "idle_timeout";
    case FailureReason::kMaxDuration:
      return "max_duration";
    case FailureReason::kCancelled:
      return "cancelled";
    case FailureReason::kDraining:
      return "draining";
    case FailureReason::kInternal:
      return "internal";
  }
  return "internal";
}

Metrics::Metrics()
    : active_streams(BuildGauge()
                         .Name("gmmscore_active_streams")
                         .Help("Score streams open now")
                         .Register(*registry_)
                         .Add({})),
      buffered_bytes(BuildGauge()
                         .Name("gmmscore_stream_buffered_bytes")
                         .Help("Bytes held for open streams: frames not yet windowed, windows "
                               "queued for scoring, responses not yet written")
                         .Register(*registry_)
                         .Add({})),
      windows_sent(BuildCounter()
                       .Name("gmmscore_windows_sent_total")
                       .Help("Score windows written to clients")
                       .Register(*registry_)
                       .Add({})),
      stream_messages_sent(BuildCounter()
                               .Name("gmmscore_stream_messages_sent_total")
                               .Help("ScoreStreams messages written to clients (each carries the "
                                     "replies of its call's streams ready when it is written)")
                               .Register(*registry_)
                               .Add({})),
      batch_frames(BuildHistogram()
                       .Name("gmmscore_batch_frames")
                       .Help("Frames per backend call (windows of many streams batched)")
                       .Register(*registry_)
                       .Add({}, kFrameBuckets)),
      queue_wait_seconds(BuildHistogram()
                             .Name("gmmscore_queue_wait_seconds")
                             .Help("Time a window waited in the batcher before its batch ran")
                             .Register(*registry_)
                             .Add({}, kLatencyBuckets)),
      compute_seconds(BuildHistogram()
                          .Name("gmmscore_compute_seconds")
                          .Help("Backend time per batch, all models of the set")
                          .Register(*registry_)
                          .Add({}, kLatencyBuckets)),
      window_latency_seconds(
          BuildHistogram()
              .Name("gmmscore_window_latency_seconds")
              .Help("From a window's last frame read to its scores written to the client")
              .Register(*registry_)
              .Add({}, kLatencyBuckets)),
      before_write_seconds(
          StageFamily(*registry_).Add({{"stage", "before_write"}}, kLatencyBuckets)),
      write_seconds(StageFamily(*registry_).Add({{"stage", "write"}}, kLatencyBuckets)),
      frames_received_(BuildCounter()
                           .Name("gmmscore_frames_received_total")
                           .Help("Feature frames read from clients, by model")
                           .Register(*registry_)),
      frames_scored_(BuildCounter()
                         .Name("gmmscore_frames_scored_total")
                         .Help("Frames scored, by model")
                         .Register(*registry_)),
      device_frames_scored_(BuildCounter()
                                .Name("gmmscore_device_frames_scored_total")
                                .Help("Frames of batches scored, by device (every model of the "
                                      "set counted once)")
                                .Register(*registry_)),
      device_busy_seconds_(BuildCounter()
                               .Name("gmmscore_device_busy_seconds_total")
                               .Help("Seconds a device had a batch in flight, from staging to its "
                                     "results (overlapping batches counted once); rate() is "
                                     "its busy fraction")
                               .Register(*registry_)),
      buffer_bytes_(
          BuildGauge()
              .Name("gmmscore_device_buffer_bytes")
              .Help("Bytes of batch buffers a device's lane holds (both pipeline slots on a GPU)")
              .Register(*registry_)),
      failures_(BuildCounter()
                    .Name("gmmscore_stream_failures_total")
                    .Help("Streams that ended with an error, by reason")
                    .Register(*registry_)),
      model_bytes_(BuildGauge()
                       .Name("gmmscore_model_bytes")
                       .Help("Bytes of resident model parameters, by model, version and device")
                       .Register(*registry_)) {}

absl::Status Metrics::Serve(const std::string& listen) {
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(listen);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("--metrics-listen ", listen, ": cannot serve metrics: ", e.what()));
  }
  exposer_->RegisterCollectable(registry_);
  return absl::OkStatus();
}

int Metrics::port() const {
  if (exposer_ == nullptr) return 0;
  const std::vector<int> ports = exposer_->GetListeningPorts();
  return ports.empty() ? 0 : ports[0];
}

}  // namespace gmmscore::server

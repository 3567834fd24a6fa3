#include "server/config.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace gmmscore::server {

absl::Status ValidateModelName(const std::string& name) {
  // A name that is refused is quoted escaped and cut short: it comes from a client.
  const auto quoted = [&name] {
    return name.size() <= 64 ? absl::StrCat("'", absl::CHexEscape(name), "'")
                             : absl::StrCat("'", absl::CHexEscape(name.substr(0, 64)), "...' (",
                                            name.size(), " bytes)");
  };
  if (name.empty() || name.size() > 128) {
    return absl::InvalidArgumentError(
        absl::StrCat("model name ", quoted(), " must have 1 to 128 characters"));
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("model name ", quoted(), " may hold only letters, digits, '.', '_', '-'"));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseModelSpec(const std::string& text, ModelSpec* spec) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq + 1 == text.size()) {
    return absl::InvalidArgumentError(absl::StrCat("--model '", text, "': expected NAME=PATH"));
  }
  spec->name = text.substr(0, eq);
  spec->path = text.substr(eq + 1);
  if (absl::Status s = ValidateModelName(spec->name); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--model: ", s.message()));
  }
  return absl::OkStatus();
}

absl::Status ValidateConfig(const ServerConfig& c) {
  auto range = [](const char* flag, int64_t value, int64_t lo, int64_t hi) -> absl::Status {
    if (value < lo || value > hi) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, " ", value, " is outside [", lo, ", ", hi, "]"));
    }
    return absl::OkStatus();
  };
  const StreamLimits& s = c.stream;
  for (const absl::Status& status : {
           range("max-streams", c.max_streams, 1, 1 << 20),
           range("max-message-bytes", c.max_message_bytes, 1024, 1 << 30),
           range("stream-window-bytes", c.stream_window_bytes, 1024, 1 << 30),
           range("stream-threads", c.stream_threads, 0, 1024),
           range("scorer-threads", c.scorer_threads, 0, 4096),
           range("max-window-frames", s.max_window_frames, 1, 1 << 20),
           range("window-frames", s.default_window_frames, 1, s.max_window_frames),
           range("max-frames-per-chunk", s.max_frames_per_chunk, 1, 1 << 24),
           range("max-models-per-stream", s.max_models_per_stream, 1, 8),
           range("max-select-window", s.max_select_window, 1, 1 << 24),
           range("max-response-bytes", s.max_response_bytes, 1024, 1 << 30),
           range("max-stream-windows", s.max_stream_windows, 1, 1 << 16),
           range("max-batch-frames", c.batcher.max_batch_frames, 0, 1 << 24),
           range("catch-up-batch-frames", c.batcher.catch_up_batch_frames, 0, 1 << 24),
           range("max-align-frames", c.align.max_frames, 1, 1 << 28),
           range("max-align-graph-arcs", c.align.max_graph_arcs, 1, 1 << 30),
           range("max-concurrent-alignments", c.align.max_concurrent, 1, 1 << 16),
           range("align-threads", c.align.threads, 1, 1024),
           range("max-adapt-frames", c.adapt.max_frames, 1, 1 << 28),
           range("max-concurrent-adaptations", c.adapt.max_concurrent, 1, 1024),
           range("batch-workers", c.batcher.workers, 1, 256),
           range("delivery-threads", c.batcher.delivery_threads, 0, 1024),
       }) {
    if (!status.ok()) return status;
  }
  if (s.default_max_latency <= absl::ZeroDuration() ||
      s.default_max_latency > s.max_latency_limit) {
    return absl::InvalidArgumentError(absl::StrCat("--max-latency must be in (0, ",
                                                   absl::FormatDuration(s.max_latency_limit), "]"));
  }
  for (const auto& [flag, d] : {std::pair{"idle-timeout", s.idle_timeout},
                                {"max-stream-duration", s.max_stream_duration},
                                {"max-queue-delay", c.batcher.max_queue_delay},
                                {"drain-timeout", c.drain_timeout}}) {
    if (d < absl::ZeroDuration()) {
      return absl::InvalidArgumentError(absl::StrCat("--", flag, " must not be negative"));
    }
  }
  if (c.backend != "cpu" && c.backend != "auto" && c.backend != "cuda") {
    return absl::InvalidArgumentError(
        absl::StrCat("--backend '", c.backend, "': expected cpu, cuda or auto"));
  }
  const bool tls = !c.tls_cert_file.empty() || !c.tls_key_file.empty();
  if (c.plaintext && (tls || !c.tls_client_ca_file.empty())) {
    return absl::InvalidArgumentError("--plaintext and --tls-* exclude each other");
  }
  if (!c.plaintext && (c.tls_cert_file.empty() || c.tls_key_file.empty())) {
    return absl::InvalidArgumentError(
        "give --tls-cert and --tls-key, or --plaintext to serve without transport security");
  }
  for (const ModelSpec& m : c.models) {
    GMM_RETURN_IF_ERROR(ValidateModelName(m.name));
  }
  return absl::OkStatus();
}

}  // namespace gmmscore::server

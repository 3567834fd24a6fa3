#include "server/flags.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "server/config.h"
#include "util/status_macros.h"

namespace {
// The defaults are ServerConfig's (config.h): written once, there.
const gmmscore::server::ServerConfig& Defaults() {
  static const gmmscore::server::ServerConfig defaults;
  return defaults;
}
}  // namespace

ABSL_FLAG(std::string, listen, Defaults().listen,
          "HOST:PORT the gRPC services listen on, or unix:PATH for a Unix-domain socket");
ABSL_FLAG(std::string, metrics_listen, "",
          "HOST:PORT serving Prometheus metrics at /metrics; empty: no metrics endpoint");
ABSL_FLAG(std::vector<std::string>, model, {},
          "NAME=PATH of a model to load at start; repeat for several (paths must not contain "
          "commas)");
ABSL_FLAG(std::vector<std::string>, front_end, {},
          "NAME=FILE of a front-end config (gmmscore compute-feats options, Kaldi conf syntax) "
          "that audio streams may name; repeat for several. NAME.conf files under --model-root "
          "are found too");
ABSL_FLAG(std::string, model_root, "",
          "directory ModelAdmin.LoadModel paths are confined to; empty: run-time loads refused");
ABSL_FLAG(std::string, backend, Defaults().backend,
          "scoring backend: cpu, cuda or auto (cuda when a GPU is usable, else cpu; says which)");
ABSL_FLAG(std::string, devices, Defaults().devices,
          "GPUs to score on with --backend cuda or auto: all, or numbers like 0,1; every model "
          "is resident on each, and each batch goes to the least-loaded one");
ABSL_FLAG(int32_t, scorer_threads, Defaults().scorer_threads,
          "CPU threads per backend call; 0: all hardware threads");
ABSL_FLAG(int32_t, window_frames, Defaults().stream.default_window_frames,
          "frames per response window when the stream asks for 0");
ABSL_FLAG(int32_t, max_window_frames, Defaults().stream.max_window_frames,
          "largest window a stream may ask for");
ABSL_FLAG(absl::Duration, max_latency, Defaults().stream.default_max_latency,
          "a partial window is sent once its oldest frame waited this long (streams asking 0)");
ABSL_FLAG(int32_t, max_models_per_stream, Defaults().stream.max_models_per_stream,
          "models one stream may fuse (at most 8); a model named twice is refused");
ABSL_FLAG(int32_t, max_select_window, Defaults().stream.max_select_window,
          "frames the select fusion rule may sum over (its running sums cost models x window)");
ABSL_FLAG(int32_t, max_response_bytes, Defaults().stream.max_response_bytes,
          "largest response a stream's window may make; configs asking more (window x states "
          "in the encoding) get INVALID_ARGUMENT");
ABSL_FLAG(int32_t, max_align_frames, Defaults().align.max_frames,
          "frames one Align call may send (INVALID_ARGUMENT beyond)");
ABSL_FLAG(int32_t, max_align_graph_arcs, Defaults().align.max_graph_arcs,
          "arcs of the graph one Align call may send (INVALID_ARGUMENT beyond)");
ABSL_FLAG(int32_t, max_concurrent_alignments, Defaults().align.max_concurrent,
          "Align calls in progress at once; more get RESOURCE_EXHAUSTED");
ABSL_FLAG(int32_t, align_threads, Defaults().align.threads,
          "threads that run the Viterbi of Align calls (their frames are scored on the lanes)");
ABSL_FLAG(int32_t, max_adapt_frames, Defaults().adapt.max_frames,
          "frames one ModelAdmin.AdaptModel call may send (RESOURCE_EXHAUSTED beyond)");
ABSL_FLAG(int32_t, max_concurrent_adaptations, Defaults().adapt.max_concurrent,
          "AdaptModel calls in progress at once; more get RESOURCE_EXHAUSTED");
ABSL_FLAG(int64_t, max_kept_bytes, Defaults().adapt.max_kept_bytes,
          "bytes of frames all streams together may keep for AdaptModel (StreamConfig.keep_frames, "
          "reserved when a stream starts; RESOURCE_EXHAUSTED beyond)");
ABSL_FLAG(absl::Duration, kept_frames_ttl, Defaults().adapt.kept_ttl,
          "how long a stream's kept frames stay after it ends");
ABSL_FLAG(int32_t, max_frames_per_chunk, Defaults().stream.max_frames_per_chunk,
          "frames in one FeatureChunk; more ends the stream with INVALID_ARGUMENT");
ABSL_FLAG(int32_t, max_stream_windows, Defaults().stream.max_stream_windows,
          "windows of one stream queued, scored or being written; the stream is not read "
          "while this many are out");
ABSL_FLAG(int32_t, max_batch_frames, Defaults().batcher.max_batch_frames,
          "frames per backend call, windows of many streams; 0: 1024 on GPUs, 512 on the CPU");
ABSL_FLAG(int32_t, catch_up_batch_frames, Defaults().batcher.catch_up_batch_frames,
          "the most frames a batch takes from a queue that holds more than --max-batch-frames "
          "(a queue that fell behind catches up in fewer, larger batches; the GPU's buffers are "
          "sized for it); 0: --max-batch-frames");
ABSL_FLAG(absl::Duration, max_queue_delay, Defaults().batcher.max_queue_delay,
          "longest a window waits for others to batch with");
ABSL_FLAG(int32_t, batch_workers, Defaults().batcher.workers,
          "CPU backend: batches scored at once (each backend call uses --scorer-threads on top)");
ABSL_FLAG(int32_t, delivery_threads, Defaults().batcher.delivery_threads,
          "threads that hand scored windows to their streams (copy, fuse, encode); 0: a quarter "
          "of the hardware threads, at least 2");
ABSL_FLAG(int32_t, max_streams, Defaults().max_streams,
          "open streams; more get RESOURCE_EXHAUSTED");
ABSL_FLAG(int32_t, max_message_bytes, Defaults().max_message_bytes,
          "largest message a client may send");
ABSL_FLAG(int32_t, stream_window_bytes, Defaults().stream_window_bytes,
          "HTTP/2 receive window per stream: what gRPC buffers of a stream the server is not "
          "reading");
ABSL_FLAG(int32_t, stream_threads, Defaults().stream_threads,
          "threads (each with a gRPC completion queue of its own) that run the Score streams' "
          "reads, writes and reactions; 0: one per hardware thread");
ABSL_FLAG(absl::Duration, idle_timeout, Defaults().stream.idle_timeout,
          "a stream with nothing read or written this long (and no scores owed to it) ends with "
          "DEADLINE_EXCEEDED; 0: none");
ABSL_FLAG(absl::Duration, max_stream_duration, Defaults().stream.max_stream_duration,
          "a stream open this long ends with DEADLINE_EXCEEDED; 0: none");
ABSL_FLAG(absl::Duration, drain_timeout, Defaults().drain_timeout,
          "on SIGTERM/SIGINT, how long open streams get to finish before they are cancelled");
ABSL_FLAG(bool, plaintext, false, "serve without TLS (required when no --tls-cert is given)");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain of the server");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of the server");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA certificates; when set, clients must present a certificate they signed (mTLS)");
ABSL_FLAG(std::string, admin_token_file, "",
          "file holding the token ModelAdmin mutations must present as 'authorization: Bearer "
          "TOKEN'; empty: mutations refused");

namespace gmmscore::server {
namespace {

constexpr char kUsage[] =
    "gmmscored: streams GMM state log-likelihoods to decoders over gRPC\n"
    "usage: gmmscored --model NAME=PATH [--model ...] (--plaintext | --tls-cert F --tls-key F) "
    "[options]\n";

bool OurFlag(const absl::CommandLineFlag& flag) {
  return absl::StrContains(flag.Filename(), "server/flags.cc");
}

void PrintHelp() {
  std::printf("%s\nflags (with their defaults):\n", kUsage);
  std::vector<std::pair<std::string, const absl::CommandLineFlag*>> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (OurFlag(*flag)) flags.emplace_back(absl::StrReplaceAll(name, {{"_", "-"}}), flag);
  }
  std::sort(flags.begin(), flags.end());
  for (const auto& [name, flag] : flags) {
    std::string def = flag->DefaultValue();
    if (def.empty()) def = "\"\"";
    std::printf("  --%s (default %s)\n      %s\n", name.c_str(), def.c_str(), flag->Help().c_str());
  }
}

// absl flag names cannot hold dashes and a repeated flag keeps its last value: rewrite
// "--metrics-listen=X" as "--metrics_listen=X" and gather every --model and --front-end into one
// list each.
std::vector<std::string> Normalize(int argc, char** argv, bool* help) {
  std::vector<std::string> out = {argv[0]};
  // The repeatable flags: absl keeps only the last of a repeated vector flag, so every value
  // given is gathered into one comma-separated flag.
  std::map<std::string, std::vector<std::string>> repeated = {{"model", {}}, {"front_end", {}}};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h" || arg == "--helpfull") *help = true;
    if (arg.rfind("--", 0) == 0) {
      const size_t eq = arg.find('=');
      std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      std::replace(name.begin(), name.end(), '-', '_');
      arg = "--" + name + (eq == std::string::npos ? "" : arg.substr(eq));
      if (const auto it = repeated.find(name); it != repeated.end()) {
        if (eq != std::string::npos) {
          it->second.push_back(arg.substr(eq + 1));
        } else if (i + 1 < argc) {
          it->second.push_back(argv[++i]);
        }
        continue;
      }
    }
    out.push_back(arg);
  }
  for (const auto& [name, values] : repeated) {
    if (!values.empty()) out.push_back("--" + name + "=" + absl::StrJoin(values, ","));
  }
  return out;
}

}  // namespace

absl::StatusOr<ServerConfig> ParseFlags(int argc, char** argv) {
  bool help = false;
  std::vector<std::string> args = Normalize(argc, argv, &help);
  if (help) {
    PrintHelp();
    std::exit(0);
  }
  absl::SetProgramUsageMessage(kUsage);
  std::vector<char*> ptrs;
  for (std::string& a : args) ptrs.push_back(a.data());
  const std::vector<char*> positional = absl::ParseCommandLine(int(ptrs.size()), ptrs.data());
  if (positional.size() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("unexpected argument '", positional[1], "' (see --help)"));
  }

  ServerConfig c;
  c.listen = absl::GetFlag(FLAGS_listen);
  c.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  for (const std::string& text : absl::GetFlag(FLAGS_model)) {
    ModelSpec spec;
    GMM_RETURN_IF_ERROR(ParseModelSpec(text, &spec));
    c.models.push_back(spec);
  }
  c.model_root = absl::GetFlag(FLAGS_model_root);
  for (const std::string& text : absl::GetFlag(FLAGS_front_end)) {
    ModelSpec spec;
    GMM_RETURN_IF_ERROR(ParseModelSpec(text, &spec));
    c.front_ends.push_back(spec);
  }
  c.backend = absl::GetFlag(FLAGS_backend);
  c.devices = absl::GetFlag(FLAGS_devices);
  c.scorer_threads = absl::GetFlag(FLAGS_scorer_threads);
  c.stream.default_window_frames = absl::GetFlag(FLAGS_window_frames);
  c.stream.max_window_frames = absl::GetFlag(FLAGS_max_window_frames);
  c.stream.default_max_latency = absl::GetFlag(FLAGS_max_latency);
  c.stream.max_frames_per_chunk = absl::GetFlag(FLAGS_max_frames_per_chunk);
  c.stream.max_models_per_stream = absl::GetFlag(FLAGS_max_models_per_stream);
  c.align.max_frames = absl::GetFlag(FLAGS_max_align_frames);
  c.align.max_graph_arcs = absl::GetFlag(FLAGS_max_align_graph_arcs);
  c.align.max_concurrent = absl::GetFlag(FLAGS_max_concurrent_alignments);
  c.align.threads = absl::GetFlag(FLAGS_align_threads);
  c.adapt.max_frames = absl::GetFlag(FLAGS_max_adapt_frames);
  c.adapt.max_concurrent = absl::GetFlag(FLAGS_max_concurrent_adaptations);
  c.adapt.max_kept_bytes = absl::GetFlag(FLAGS_max_kept_bytes);
  c.adapt.kept_ttl = absl::GetFlag(FLAGS_kept_frames_ttl);
  c.stream.max_select_window = absl::GetFlag(FLAGS_max_select_window);
  c.stream.max_response_bytes = absl::GetFlag(FLAGS_max_response_bytes);
  c.stream.max_stream_windows = absl::GetFlag(FLAGS_max_stream_windows);
  c.stream.idle_timeout = absl::GetFlag(FLAGS_idle_timeout);
  c.stream.max_stream_duration = absl::GetFlag(FLAGS_max_stream_duration);
  c.batcher.max_batch_frames = absl::GetFlag(FLAGS_max_batch_frames);
  c.batcher.catch_up_batch_frames = absl::GetFlag(FLAGS_catch_up_batch_frames);
  c.batcher.max_queue_delay = absl::GetFlag(FLAGS_max_queue_delay);
  c.batcher.workers = absl::GetFlag(FLAGS_batch_workers);
  c.batcher.delivery_threads = absl::GetFlag(FLAGS_delivery_threads);
  c.max_streams = absl::GetFlag(FLAGS_max_streams);
  c.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  c.stream_window_bytes = absl::GetFlag(FLAGS_stream_window_bytes);
  c.stream_threads = absl::GetFlag(FLAGS_stream_threads);
  c.drain_timeout = absl::GetFlag(FLAGS_drain_timeout);
  c.plaintext = absl::GetFlag(FLAGS_plaintext);
  c.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  c.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  c.tls_client_ca_file = absl::GetFlag(FLAGS_tls_client_ca);
  c.admin_token_file = absl::GetFlag(FLAGS_admin_token_file);
  GMM_RETURN_IF_ERROR(ValidateConfig(c));
  return c;
}

}  // namespace gmmscore::server

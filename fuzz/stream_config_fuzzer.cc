// The StreamConfig validator (server/rpc/stream_config.h): the input parsed as a v1::StreamConfig
// and resolved against a registry with the tests' Kaldi model loaded twice ("mono", "mono2": 56
// states, dimension 39) and a small model of another shape ("small": 4 states, dimension 3), with
// the daemon's default limits. A config it accepts then encodes a few frames of scores
// (server/rpc/response_encoder.h), which must stay within ResponseEncoder::MaxBytes, the bound
// the validator checks against --max-response-bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "formats/model_io.h"
#include "fuzz/fuzz_util.h"
#include "model/random_model.h"
#include "server/config.h"
#include "server/metrics.h"
#include "server/model_registry.h"
#include "server/rpc/response_encoder.h"
#include "server/rpc/stream_config.h"
#include "server/scheduling/lane_set.h"

namespace {

namespace srv = gmmscore::server;

// Built once and never destroyed (the lanes' threads outlive any input).
struct Daemon {
  srv::ServerConfig config;
  srv::Metrics metrics;
  std::unique_ptr<srv::LaneSet> lanes;
  std::unique_ptr<srv::ModelRegistry> registry;
};

void Require(const absl::Status& status) {
  if (!status.ok()) {
    std::fprintf(stderr, "stream_config fuzzer setup: %s\n", status.ToString().c_str());
    std::abort();
  }
}

const Daemon& GetDaemon() {
  static const Daemon* daemon = [] {
    auto* d = new Daemon;
    d->config.backend = "cpu";
    d->config.scorer_threads = 1;
    d->config.batcher.workers = 1;
    d->config.batcher.delivery_threads = 1;
    auto lanes = srv::LaneSet::Create(d->config, &d->metrics);
    Require(lanes.status());
    d->lanes = *std::move(lanes);
    d->registry = std::make_unique<srv::ModelRegistry>(d->config, d->lanes.get(), &d->metrics,
                                                       [](const std::string&, bool) {});
    const std::string mono = GMMSCORE_FUZZ_DATA "/kaldi-mono/final.mdl";
    gmmscore::RandomModelOptions small;
    small.num_states = 4;
    small.dim = 3;
    small.max_gauss = 2;
    const std::string small_path = gmmscore::fuzz::ScratchDir() + "/small.gmms";
    Require(gmmscore::SaveModel(gmmscore::RandomModel(small, 7), small_path,
                                gmmscore::ModelFormat::kNative));
    Require(d->registry->Load("mono", mono, false).status());
    Require(d->registry->Load("mono2", mono, false).status());
    Require(d->registry->Load("small", small_path, false).status());
    return d;
  }();
  return *daemon;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Daemon& daemon = GetDaemon();
  gmmscore::v1::StreamConfig config;
  if (!config.ParseFromArray(data, static_cast<int>(size))) return 0;
  static srv::FrontEndRegistry no_front_ends("");
  auto setup =
      srv::ResolveStreamConfig(config, *daemon.registry, no_front_ends, daemon.config.stream);
  if (!setup.ok()) return 0;

  // A few frames of finite scores with ties, in the accepted encoding.
  const int32_t frames = std::min(setup->window_frames, 4);
  gmmscore::Matrix scores(frames, setup->num_states);
  for (size_t i = 0; i < scores.data.size(); ++i) {
    scores.data[i] = -static_cast<float>((i * 7919 + size) % 997) / 8.0f;
  }
  srv::ResponseEncoder encoder(setup->encoder);
  gmmscore::v1::ScoreResponse response;
  encoder.Encode(scores, &response);
  // 64 bytes for the fields' tags and lengths, which MaxBytes leaves to the message limit's slack.
  if (int64_t(response.ByteSizeLong()) > encoder.MaxBytes(frames, setup->num_states) + 64) {
    std::fprintf(stderr, "response of %zu bytes, MaxBytes %lld\n", response.ByteSizeLong(),
                 static_cast<long long>(encoder.MaxBytes(frames, setup->num_states)));
    std::abort();
  }
  return 0;
}

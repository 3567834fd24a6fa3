// Checks a stream's StreamConfig against the server's limits and models, and resolves it into
// what the session runs with. Errors are INVALID_ARGUMENT (a value out of range or inconsistent),
// NOT_FOUND (an unknown model) or UNAVAILABLE (a model still loading).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "gmmscore/v1/scorer.pb.h"
#include "model/fusion.h"
#include "server/config.h"
#include "server/front_end_registry.h"
#include "server/model_registry.h"
#include "server/rpc/response_encoder.h"
#include "server/scheduling/batcher.h"

namespace gmmscore::server {

struct StreamSetup {
  std::string stream_id;
  std::shared_ptr<const ModelSet> models;
  FusionSpec fusion;
  int32_t dim = 0;
  int32_t num_states = 0;
  int32_t window_frames = 0;
  Clock::duration max_latency{};
  EncoderOptions encoder;
  // Audio streams: the front end that makes their features (dim is its dimension).
  std::shared_ptr<const FrontEndOptions> front_end;
};

inline constexpr size_t kMaxStreamIdBytes = 256;

absl::StatusOr<StreamSetup> ResolveStreamConfig(const v1::StreamConfig& config,
                                                const ModelRegistry& registry,
                                                FrontEndRegistry& front_ends,
                                                const StreamLimits& limits);

}  // namespace gmmscore::server

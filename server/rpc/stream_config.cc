#include "server/rpc/stream_config.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "model/shape_checks.h"
#include "util/status_macros.h"

namespace gmmscore::server {
namespace {

absl::StatusOr<FusionRule> ToFusionRule(v1::StreamConfig::Fusion fusion) {
  switch (fusion) {
    case v1::StreamConfig::MAX:
      return FusionRule::kMax;
    case v1::StreamConfig::LOG_LINEAR:
      return FusionRule::kLogLinear;
    case v1::StreamConfig::LOG_ADD:
      return FusionRule::kLogAdd;
    case v1::StreamConfig::SELECT:
      return FusionRule::kSelectBest;
    default:
      return absl::InvalidArgumentError(absl::StrCat("unknown fusion rule ", int(fusion)));
  }
}

}  // namespace

absl::StatusOr<StreamSetup> ResolveStreamConfig(const v1::StreamConfig& config,
                                                const ModelRegistry& registry,
                                                FrontEndRegistry& front_ends,
                                                const StreamLimits& limits) {
  StreamSetup setup;
  if (config.stream_id().size() > kMaxStreamIdBytes) {
    return absl::InvalidArgumentError(absl::StrCat("stream_id has ", config.stream_id().size(),
                                                   " bytes, at most ", kMaxStreamIdBytes));
  }
  setup.stream_id = config.stream_id();
  if (config.models().empty()) return absl::InvalidArgumentError("the config names no model");
  if (config.models_size() > limits.max_models_per_stream) {
    return absl::InvalidArgumentError(
        absl::StrCat("the config names ", config.models_size(), " models, at most ",
                     limits.max_models_per_stream, " (--max-models-per-stream)"));
  }
  for (int i = 0; i < config.models_size(); ++i) {
    const std::string& name = config.models(i);
    // Checked before the name goes into any message: a long name is not echoed back.
    if (absl::Status s = ValidateModelName(name); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("model ", i, " of the config: ", s.message()));
    }
    for (int j = 0; j < i; ++j) {
      if (config.models(j) == name) {
        return absl::InvalidArgumentError(
            absl::StrCat("model '", name, "' is named twice; fuse distinct models"));
      }
    }
  }

  std::vector<std::shared_ptr<ModelEntry>> models;
  std::vector<ModelShape> shapes;
  for (const std::string& name : config.models()) {
    GMM_ASSIGN_OR_RETURN(std::shared_ptr<ModelEntry> entry, registry.Acquire(name));
    shapes.push_back({name, entry->num_states(), entry->dim()});
    models.push_back(std::move(entry));
  }
  GMM_RETURN_IF_ERROR(CheckSameShape(shapes));
  setup.num_states = models.front()->num_states();
  const int32_t model_dim = models.front()->dim();
  if (config.has_audio()) {
    GMM_ASSIGN_OR_RETURN(setup.front_end, front_ends.Find(config.audio().front_end()));
    const FrontEndOptions& fe = *setup.front_end;
    if (config.audio().sample_rate_hz() != fe.mfcc.frame.samp_freq) {
      return absl::InvalidArgumentError(
          absl::StrCat("the audio is at ", config.audio().sample_rate_hz(), " Hz, front end '",
                       config.audio().front_end(), "' takes ", fe.mfcc.frame.samp_freq, " Hz"));
    }
    if (fe.dim() != model_dim || (config.dim() != 0 && config.dim() != model_dim)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "front end '", config.audio().front_end(), "' makes ", fe.dim(),
          "-dimensional features, model '", models.front()->name(), "' has dimension ", model_dim,
          config.dim() != 0 ? absl::StrCat(", the config says ", config.dim()) : ""));
    }
  } else if (config.dim() != model_dim) {
    return absl::InvalidArgumentError(absl::StrCat("the config says dimension ", config.dim(),
                                                   ", model '", models.front()->name(),
                                                   "' has dimension ", model_dim));
  }
  setup.dim = model_dim;

  GMM_ASSIGN_OR_RETURN(setup.fusion.rule, ToFusionRule(config.fusion()));
  setup.fusion.weights.assign(config.weights().begin(), config.weights().end());
  if (config.select_window() < 0) {
    return absl::InvalidArgumentError("select_window must not be negative");
  }
  if (config.select_window() > limits.max_select_window) {
    return absl::InvalidArgumentError(absl::StrCat("select_window ", config.select_window(),
                                                   " is more than ", limits.max_select_window,
                                                   " frames (--max-select-window)"));
  }
  if (config.select_window() > 0) setup.fusion.select_window = config.select_window();
  GMM_RETURN_IF_ERROR(ValidateFusion(&setup.fusion, models.size()));

  setup.window_frames =
      config.window_frames() == 0 ? limits.default_window_frames : config.window_frames();
  if (setup.window_frames < 1 || setup.window_frames > limits.max_window_frames) {
    return absl::InvalidArgumentError(absl::StrCat("window_frames ", config.window_frames(),
                                                   " is outside [1, ", limits.max_window_frames,
                                                   "] (--max-window-frames)"));
  }
  const absl::Duration latency = config.max_latency_ms() == 0
                                     ? limits.default_max_latency
                                     : absl::Milliseconds(config.max_latency_ms());
  if (latency <= absl::ZeroDuration() || latency > limits.max_latency_limit) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_latency_ms ", config.max_latency_ms(), " is outside [1, ",
                     absl::ToInt64Milliseconds(limits.max_latency_limit), "]"));
  }
  setup.max_latency =
      std::chrono::duration_cast<Clock::duration>(absl::ToChronoNanoseconds(latency));

  EncoderOptions& enc = setup.encoder;
  switch (config.encoding()) {
    case v1::StreamConfig::FLOAT32:
    case v1::StreamConfig::FLOAT16:
    case v1::StreamConfig::RELATIVE16:
      break;
    case v1::StreamConfig::BEAM_SPARSE:
      if (!std::isfinite(config.beam()) || config.beam() <= 0.0f) {
        return absl::InvalidArgumentError(
            absl::StrCat("BEAM_SPARSE needs a beam > 0, got ", config.beam()));
      }
      if (config.max_states() < 0) {
        return absl::InvalidArgumentError("max_states must not be negative");
      }
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("unknown encoding ", int(config.encoding())));
  }
  enc.encoding = config.encoding();
  enc.beam = config.beam();
  enc.max_states = config.max_states();
  if (config.state_subset_size() > setup.num_states) {
    return absl::InvalidArgumentError(absl::StrCat("state_subset has ", config.state_subset_size(),
                                                   " entries; the model has ", setup.num_states,
                                                   " states"));
  }
  for (int32_t state : config.state_subset()) {
    if (state < 0 || state >= setup.num_states) {
      return absl::InvalidArgumentError(absl::StrCat(
          "state_subset names state ", state, "; the model has states 0..", setup.num_states - 1));
    }
  }
  enc.state_subset.assign(config.state_subset().begin(), config.state_subset().end());
  const int64_t response_bytes =
      ResponseEncoder(enc).MaxBytes(setup.window_frames, setup.num_states);
  if (response_bytes > limits.max_response_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a window of ", setup.window_frames, " frames in this encoding makes responses of up to ",
        response_bytes, " bytes, more than --max-response-bytes ", limits.max_response_bytes,
        ": ask for fewer frames, fewer states or a smaller encoding"));
  }
  setup.models = ModelSet::Make(std::move(models));
  return setup;
}

}  // namespace gmmscore::server

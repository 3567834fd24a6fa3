// ModelAdmin.AdaptModel's work, apart from the RPC: the request checked against the base model
// and the limits (before anything is sized by it), the utterances' statistics accumulated on the
// CPU (train/accumulate: every frame's aligned pdf only, so a call costs frames x Gaussians of
// one pdf), and the MAP update (train/map_update, gmm-adapt-map's rules and defaults). The
// result is the base model with adapted GMMs and the base's HMM.
#pragma once

#include "absl/status/statusor.h"
#include "gmmscore/v1/model_admin.pb.h"
#include "model/gmm_model.h"
#include "server/config.h"

namespace gmmscore::server {

// INVALID_ARGUMENT naming the utterance (key, or its position) and frame; RESOURCE_EXHAUSTED
// beyond limits.max_frames.
absl::StatusOr<GmmModel> AdaptedModel(const GmmModel& base, const v1::AdaptModelRequest& request,
                                      const AdaptLimits& limits);

}  // namespace gmmscore::server

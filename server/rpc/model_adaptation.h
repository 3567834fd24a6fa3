// ModelAdmin.AdaptModel's work, apart from the RPC: the request checked against the base model
// and the limits (before anything is sized by it), each utterance's frames (sent, or kept by a
// stream: KeptFrames) and labels (transition-ids, posteriors over them, or pdfs), the statistics
// accumulated on the CPU (train/accumulate: every frame's labelled pdfs only, so a call costs
// frames x Gaussians of a pdf or a few), and the MAP update (train/map_update, gmm-adapt-map's
// rules and defaults). The result is the base model with adapted GMMs and the base's HMM.
#pragma once

#include "absl/status/statusor.h"
#include "gmmscore/v1/model_admin.pb.h"
#include "model/gmm_model.h"
#include "server/config.h"
#include "server/kept_frames.h"

namespace gmmscore::server {

// INVALID_ARGUMENT naming the utterance (key, or its position) and frame; NOT_FOUND for a
// from_stream without kept frames; RESOURCE_EXHAUSTED beyond limits.max_frames.
absl::StatusOr<GmmModel> AdaptedModel(const GmmModel& base, const v1::AdaptModelRequest& request,
                                      const AdaptLimits& limits, KeptFrames& kept,
                                      Clock::time_point now);

}  // namespace gmmscore::server

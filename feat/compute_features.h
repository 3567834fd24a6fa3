// The front end on whole utterances (gmmscore compute-feats, score --wav): MFCC, then CMVN by
// utterance, by speaker or in OnlineCmvn's causal window, then deltas; the same arithmetic as
// feat/online_front_end.h, which streams it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "absl/status/statusor.h"
#include "feat/cmvn.h"
#include "feat/front_end_options.h"
#include "util/matrix.h"

namespace gmmscore {

// The dither seed of one utterance or stream: opts.dither_seed mixed with its key, so that an
// utterance gets the same dither wherever it sits in a table.
uint64_t DitherSeed(uint64_t seed, std::string_view key);

// MFCCs, and for --cmvn=online the sliding CMVN; no utterance or speaker CMVN, no deltas. The
// dither draws from `noise`, or where that is null from GaussianNoise seeded with
// DitherSeed(opts.dither_seed, key).
absl::StatusOr<Matrix> ComputeBaseFeatures(const FrontEndOptions& opts, std::span<const float> wave,
                                           double samp_freq, double vtln_warp, std::string_view key,
                                           DitherNoise* noise = nullptr);

// Applies utterance or speaker CMVN with stats (ignored for the other modes), then the deltas or
// the splice, then the transform.
absl::StatusOr<Matrix> FinishFeatures(const FrontEndOptions& opts, Matrix base,
                                      const CmvnStats& stats);

}  // namespace gmmscore

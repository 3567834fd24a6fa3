#include "feat/compute_features.h"

#include "feat/deltas.h"
#include "feat/feature_transform.h"
#include "feat/mfcc.h"
#include "feat/splice.h"
#include "util/status_macros.h"

namespace gmmscore {

uint64_t DitherSeed(uint64_t seed, std::string_view key) {
  // FNV-1a over the key, started from the seed: stable across runs and machines.
  uint64_t h = 14695981039346656037ull ^ seed;
  for (const char c : key) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

absl::StatusOr<Matrix> ComputeBaseFeatures(const FrontEndOptions& opts, std::span<const float> wave,
                                           double samp_freq, double vtln_warp, std::string_view key,
                                           DitherNoise* noise) {
  GaussianNoise seeded(DitherSeed(opts.dither_seed, key));
  GMM_ASSIGN_OR_RETURN(Matrix mfcc, ComputeMfcc(opts.mfcc, wave, samp_freq, vtln_warp,
                                                noise != nullptr ? *noise : seeded));
  if (opts.cmvn == CmvnMode::kOnline) {
    SlidingCmvn cmvn(mfcc.cols, opts.cmn_window, opts.norm_vars);
    for (int32_t t = 0; t < mfcc.rows; ++t) cmvn.Process(mfcc.row(t));
  }
  return mfcc;
}

absl::StatusOr<Matrix> FinishFeatures(const FrontEndOptions& opts, Matrix base,
                                      const CmvnStats& stats) {
  if (opts.cmvn == CmvnMode::kUtterance || opts.cmvn == CmvnMode::kSpeaker) {
    ApplyCmvn(stats, opts.norm_vars, &base);
  }
  if (base.rows == 0) {
    base.cols = opts.dim();
    return base;
  }
  if (opts.spliced()) {
    GMM_ASSIGN_OR_RETURN(base, SpliceFrames(base, opts.splice_left, opts.splice_right));
  } else if (opts.deltas.order > 0) {
    base = ComputeDeltas(opts.deltas, base);
  }
  if (!opts.transform) return base;
  return ApplyFeatureTransform(*opts.transform, base);
}

}  // namespace gmmscore

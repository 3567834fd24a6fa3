// gmm-est's M-step and mixing up in Kaldi's own parameters (model/kaldi_stored_model.h), so that
// the model written is the one gmm-est writes from the same statistics, to the bit where Kaldi's
// arithmetic is plain float and double (src/gmm/mle-diag-gmm.cc MleDiagGmmUpdate,
// src/gmm/diag-gmm.cc DiagGmm::Split, src/gmm/am-diag-gmm.cc SplitByCount). The rules are
// train/mle_update.h's and train/mix_up.h's; what differs is where the rounding happens:
//  - each Gaussian's old parameters go to double (var = 1/iv, mean = miv var), the update is made
//    there (mean = first x (1/c), var = second x (1/c) - mean^2), and the result comes back as
//    Kaldi's CopyToDiagGmm brings it: iv = 1/float(var), miv = float(mean) x iv, in float;
//  - a Gaussian removed renormalises its pdf's weights in float, after each removal;
//  - a split moves the two copies' means-times-inverse-variances by -/+ perturb x z x sqrt(iv)
//    in float (z = the normal draw), the variances copied.
// Where Kaldi calls BLAS (sums of a pdf's weights, the perturbation's saxpy), the sums here are
// sequential and unfused; a BLAS that reorders or fuses them can move a last bit.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "model/gmm_stats.h"
#include "model/kaldi_stored_model.h"
#include "train/mix_down.h"
#include "train/mix_up.h"
#include "train/mle_update.h"

namespace gmmscore {

// Re-estimates every pdf's GMM of `model` from `stats` where `flags` say (weights, means,
// variances), with MleOptions' floors and removals; `summary` gets what gmm-est logs (the
// objective change as Kaldi's MlObjective measures it, before removals). Errors where the
// statistics do not fit the model or lack what the flags ask for.
absl::Status MleUpdateKaldiForm(const MleOptions& options, const GmmStats& stats, uint16_t flags,
                                KaldiStoredModel* model, MleSummary* summary);

// Splits pdf p's GMM until it has targets[p] Gaussians (pdfs with as many or more are left
// alone), the heaviest first, perturbing with `normal`'s draws in pdf, split and dimension order.
absl::Status SplitKaldiForm(const std::vector<int32_t>& targets, float perturb_factor,
                            NormalDraw normal, KaldiStoredModel* model);

// What mixing did: the number of Gaussians before and after merging down, and splitting up.
struct KaldiMixSummary {
  int64_t before_down = 0, after_down = 0;
  int64_t before_up = 0, after_up = 0;
};

// gmm-est's and gmm-mixup's mixing, with one occupancy per pdf: down to `down.target` where it is
// not 0 (merging in means and variances, train/mix_down.h; the pdfs it leaves alone keep their
// bits), then up to `up.target` where it is not 0 (SplitTargets, then SplitKaldiForm).
absl::StatusOr<KaldiMixSummary> MixKaldiForm(const std::vector<float>& occupancies,
                                             const MixDownOptions& down, const MixUpOptions& up,
                                             NormalDraw normal, KaldiStoredModel* model);

}  // namespace gmmscore

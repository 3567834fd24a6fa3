// Mixing down: merging a model's Gaussians towards a total, with gmm-est's --mix-down rules
// (AmDiagGmm::MergeByCount and DiagGmm::Merge in Kaldi's src/gmm/, targets from GetSplitTargets):
//  - targets per pdf: those of mixing up (SplitTargets in train/mix_up.h) for the same total,
//    occupancies, power and min count; a pdf with more Gaussians than its target merges down to
//    it, any other is left as it is. The targets share the total out by occupancy, so a total at
//    or above the model's may still merge a pdf that has more than its share, and a total below
//    the number of pdfs merges every pdf to one Gaussian, as in Kaldi.
//  - merging to one Gaussian pools them all at once: the weight is their total (1 when the total
//    is off 1 by more than 1e-6 relative, Kaldi's rescaling), mean and variance the pooled ones.
//  - merging to more than one takes a pair at a time, the pair that loses the least likelihood:
//    with s = var + mu^2 per dimension, the pair (a, b) pools into
//      w = w_a + w_b,  mu = (w_a mu_a + w_b mu_b) / w,  var = (w_a s_a + w_b s_b) / w - mu^2,
//    and costs  w L(var) - w_a L(var_a) - w_b L(var_b)  with L(v) = -1/2 sum_d log v_d (always
//    <= 0). The pair with the largest value goes first; among equals the first found scanning
//    a = 0, 1, ... and b = 0 .. a - 1. The pooled Gaussian takes a's place (the later one), b is
//    dropped, and the survivors keep their order. Costs of pairs with the pooled Gaussian are
//    computed anew; every other cost stays. Gaussians never merged keep their parameters as they
//    were.
// As in Kaldi, all of this is in float arithmetic.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "model/gmm_model.h"

namespace gmmscore {

struct MixDownOptions {
  int32_t target = 0;       // --mix-down: the total number of Gaussians wanted, >= 1
  float power = 0.2f;       // --power
  float min_count = 20.0f;  // --min-count
};

// The model with every pdf merged down to its target (never split up); occupancies one per pdf.
absl::StatusOr<GmmModel> MixDown(const GmmModel& model, const std::vector<float>& occupancies,
                                 const MixDownOptions& options);

// The merging alone: pdf p merged until it has targets[p] Gaussians (each target >= 1; a pdf with
// as many or fewer is left alone).
absl::StatusOr<GmmModel> MergePdfs(const GmmModel& model, const std::vector<int32_t>& targets);

}  // namespace gmmscore

// Mixing up: growing a model's Gaussians towards a total, with gmm-est's rules
// (AmDiagGmm::SplitByCount, GetSplitTargets and DiagGmm::Split in Kaldi's src/gmm/):
//  - targets per pdf: every pdf starts at 1; one Gaussian at a time goes to the pdf with the
//    largest occ^power / (Gaussians + 1e-10) (occ its count in the statistics), until the total
//    is reached or no pdf may grow: a pdf stops at the number where (n + 1) x min_count >= occ;
//  - a pdf below its target splits its heaviest Gaussian (the first of equal weights) until it
//    has the target: the weight halves, and the two means move by -/+ perturb_factor x sigma x z,
//    z a standard normal draw per dimension; the variances are copied.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "model/gmm_model.h"

namespace gmmscore {

struct MixUpOptions {
  int32_t target = 0;            // --mix-up: the total number of Gaussians wanted
  float power = 0.2f;            // --power
  float min_count = 20.0f;       // --min-count
  float perturb_factor = 0.01f;  // --perturb-factor
};

// The number of Gaussians each pdf should have; occupancies one per pdf.
std::vector<int32_t> SplitTargets(const std::vector<float>& occupancies, int32_t target,
                                  float power, float min_count);

// A standard normal draw. gmm-est's own draws are KaldiRandom::Gauss (util/kaldi_random.h):
// with those, a split perturbs each mean by what gmm-est's perturbs it.
using NormalDraw = absl::FunctionRef<double()>;

// Pdf p split until it has targets[p] Gaussians (a pdf with as many or more is left alone), means
// perturbed by perturb_factor standard deviations; `normal` draws the perturbations, one per
// dimension of each split in pdf and split order, as Kaldi's DiagGmm::Split draws them. (Models in
// Kaldi's own parameters split with SplitKaldiForm, train/kaldi_form_update.h.)
absl::StatusOr<GmmModel> SplitPdfs(const GmmModel& model, const std::vector<int32_t>& targets,
                                   float perturb_factor, NormalDraw normal);

}  // namespace gmmscore

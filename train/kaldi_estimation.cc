#include "train/kaldi_estimation.h"

#include <algorithm>
#include <utility>

#include "util/kaldi_random.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<KaldiEstimation> EstimateKaldiForm(const KaldiEstimationOptions& options,
                                                  const ModelStats& stats,
                                                  KaldiStoredModel* model) {
  KaldiEstimation out;
  if (options.flags & kGmmTransitions) {
    TransitionUpdateSummary summary;
    GMM_ASSIGN_OR_RETURN(
        TransitionModel updated,
        MleUpdateTransitions(options.transitions, stats.transitions, *model->hmm, &summary));
    model->hmm = std::move(updated);
    out.transitions = summary;
  }

  MleOptions mle = options.mle;
  if (options.var_floor_relative > 0.0) {
    GMM_ASSIGN_OR_RETURN(std::vector<double> floor,
                         RelativeVarianceFloor(stats.gmm, options.var_floor_relative));
    for (double& f : floor) f = std::max(f, mle.min_variance);
    mle.variance_floor = std::move(floor);
  }
  out.gaussians_before = model->NumGauss();
  GMM_RETURN_IF_ERROR(MleUpdateKaldiForm(mle, stats.gmm, options.flags, model, &out.gmm));

  const bool mixing = options.up.target != 0 || options.down.target != 0;
  if (mixing || options.occupancies) {
    out.occupancies.resize(static_cast<size_t>(stats.gmm.num_pdfs()));
    for (int32_t pdf = 0; pdf < stats.gmm.num_pdfs(); ++pdf) {
      out.occupancies[size_t(pdf)] = static_cast<float>(stats.gmm.PdfOccupancy(pdf));
    }
  }
  if (mixing) {
    KaldiRandom random(static_cast<uint32_t>(options.seed));
    GMM_ASSIGN_OR_RETURN(out.mix, MixKaldiForm(
                                      out.occupancies, options.down, options.up,
                                      [&] { return double{random.Gauss()}; }, model));
  }
  return out;
}

}  // namespace gmmscore

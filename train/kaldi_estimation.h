// gmm-est as one call: the transition update, the GMM update (with HTK's relative variance floor
// where asked) and mixing down and up, on a model in Kaldi's own parameters, so that the model is
// the one gmm-est writes from the same statistics (train/kaldi_form_update.h says where the bits
// come from). The caller reads and writes the files and words the summary as gmm-est logs it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "model/gmm_stats.h"
#include "model/kaldi_stored_model.h"
#include "train/kaldi_form_update.h"
#include "train/mix_down.h"
#include "train/mix_up.h"
#include "train/mle_update.h"
#include "train/transition_update.h"

namespace gmmscore {

struct KaldiEstimationOptions {
  uint16_t flags = kGmmAll;  // what to update (gmm-est's --update-flags, "mvwt")
  MleOptions mle;
  TransitionUpdateOptions transitions;
  MixUpOptions up;      // target 0: no mixing up
  MixDownOptions down;  // target 0: no mixing down
  // Also floor variances at this times the statistics' global variance, per dimension (HTK's
  // vFloor; 0: off).
  double var_floor_relative = 0.0;
  // The perturbations' seed: 0 and 1 are gmm-est's own draws (glibc's unseeded rand()).
  int32_t seed = 0;
  bool occupancies = false;  // return the pdfs' occupancies even without mixing
};

struct KaldiEstimation {
  std::optional<TransitionUpdateSummary> transitions;  // where the flags had 't'
  int64_t gaussians_before = 0;                        // before the GMM update
  MleSummary gmm;
  std::optional<KaldiMixSummary> mix;  // where a mixing target was set
  std::vector<float> occupancies;      // per pdf, in float as gmm-est writes them; where mixed
                                       // or asked for
};

// Updates model from stats. Errors where the statistics do not fit the model or lack what the
// flags ask for; model is then left part-updated.
absl::StatusOr<KaldiEstimation> EstimateKaldiForm(const KaldiEstimationOptions& options,
                                                  const ModelStats& stats, KaldiStoredModel* model);

}  // namespace gmmscore

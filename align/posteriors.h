// Posteriors over transition-ids, per frame a list of (transition-id, weight) as Kaldi's Posterior
// holds them (ali-to-post, weight-silence-post, gmm-est-fmllr): from an alignment, silence
// weighted, and gathered per pdf.
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "align/forward_backward.h"
#include "model/kaldi_stored_model.h"
#include "model/transition_model.h"
#include "util/kaldi_random.h"
#include "util/matrix.h"

namespace gmmscore {

using Posterior = std::vector<FramePosterior>;

// Each frame's transition-id with weight 1 (Kaldi's AlignmentToPosterior).
Posterior AlignmentToPosterior(const std::vector<int32_t>& alignment);

// Kaldi's WeightSilencePost: the weight of each entry whose phone is in `silence` scaled by
// `scale` (entries scaled to 0 dropped); with `distribute` (WeightSilencePostDistributed), each
// frame scaled as a whole by (silence weight x scale + other weight) / (all its weight), a frame
// scaled to 0 emptied. The transition-ids must be the model's.
void WeightSilencePosterior(const TransitionModel& model, const std::set<int32_t>& silence,
                            float scale, bool distribute, Posterior* posterior);

// Per frame the pdfs and their weights summed in float, those that sum to 0 left out, in the order
// Kaldi's ConvertPosteriorToPdfs writes them (its unordered_map's).
Posterior PosteriorToPdfs(const TransitionModel& model, const Posterior& posterior);

// Kaldi's GaussPost: per frame, per pdf, the posteriors of that pdf's Gaussians.
using GaussPosterior = std::vector<std::vector<std::pair<int32_t, std::vector<float>>>>;

// gmm-post-to-gpost for one utterance: each frame's posteriors gathered per pdf
// (PosteriorToPdfs), and for each (pdf, weight) the posteriors of the pdf's Gaussians for the frame
// under `model` (KaldiComponentPosteriors) times the weight. With rand_prune > 0 each posterior
// below it becomes rand_prune with probability posterior / rand_prune, else 0 (Kaldi's RandPrune,
// drawing from `random`); a pdf whose posteriors are all 0 is left out. *like and *weight get the
// utterance's sums of log-likelihood x weight and of weights, in float as Kaldi sums them.
// InvalidArgument where the sizes, a transition-id or a frame do not fit the model.
absl::StatusOr<GaussPosterior> ToGaussPosteriors(const KaldiStoredModel& model, const Matrix& feats,
                                                 const Posterior& posterior, float rand_prune,
                                                 KaldiRandom* random, float* like, float* weight);

}  // namespace gmmscore

// Posteriors over transition-ids, per frame a list of (transition-id, weight) as Kaldi's Posterior
// holds them (ali-to-post, weight-silence-post, gmm-est-fmllr): from an alignment, silence
// weighted, and gathered per pdf.
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "align/forward_backward.h"
#include "model/transition_model.h"

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

// Per frame the pdfs and their summed weights, in increasing pdf order (Kaldi's
// ConvertPosteriorToPdfs).
Posterior PosteriorToPdfs(const TransitionModel& model, const Posterior& posterior);

}  // namespace gmmscore

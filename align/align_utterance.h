// One utterance aligned as Kaldi's gmm-align-compiled aligns it (AlignUtteranceWrapper): the
// graph's transition costs added with the two scales, "careful" concatenation if asked, Viterbi
// with the beam and, where no final state is reached, once more with the retry beam from the
// start; the best path's transition-ids, its words, and its score.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "align/forward_backward.h"
#include "model/align_graph.h"
#include "model/transition_model.h"
#include "util/matrix.h"

namespace gmmscore {

// gmm-align-compiled's options, with its defaults.
struct AlignOptions {
  float beam = 200.0f;
  float retry_beam = 0.0f;  // 0: no second try
  bool careful = false;
  float transition_scale = 1.0f;
  float self_loop_scale = 1.0f;
  float acoustic_scale = 1.0f;
};

// InvalidArgument "beams do not make sense" where beam <= 0 or a retry beam is not above the
// beam, as Kaldi refuses them; likewise a non-positive acoustic scale.
absl::Status ValidateAlignOptions(const AlignOptions& options);

struct UtteranceAlignment {
  // OK; or why the utterance did not align (the rest of a table goes on): an empty graph, no
  // frames, an input label that is not a transition-id of the model, no final state reached.
  absl::Status status;
  bool retried = false;                 // the retry beam was used
  std::vector<int32_t> transition_ids;  // one per frame
  std::vector<int32_t> words;
  // -(graph cost + scaled acoustic cost) of the best path: what Kaldi writes to the scores
  // archive (acoustic_scale x acoustic log-likelihood + graph log-probability).
  float score = 0.0f;
  float log_likelihood = 0.0f;  // score / acoustic_scale: what Kaldi's per-frame average sums
  // Per frame, the acoustic log-likelihood along the path (unscaled), as Kaldi's
  // --write-per-frame-acoustic-loglikes.
  std::vector<float> frame_loglikes;
  // Where an aligner was asked for them (align/aligner.h): per frame, the forward-backward
  // posteriors over transition-ids.
  std::vector<FramePosterior> posteriors;
};

// Aligns loglikes (frames x pdfs of model: natural-log likelihoods) to graph (a compiled training
// graph without transition costs; they are added here). options must pass ValidateAlignOptions.
UtteranceAlignment AlignUtterance(const AlignOptions& options, const TransitionModel& model,
                                  AlignGraph graph, const Matrix& loglikes);

}  // namespace gmmscore

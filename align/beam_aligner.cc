#include "align/beam_aligner.h"

#include "align/align_graph_preparation.h"
#include "align/forward_backward.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<std::vector<UtteranceAlignment>> BeamAligner::Align(
    std::span<const UtteranceToAlign> batch, bool posteriors) {
  std::vector<UtteranceAlignment> results;
  results.reserve(batch.size());
  for (const UtteranceToAlign& u : batch) {
    Matrix loglikes;
    GMM_RETURN_IF_ERROR(scorer_.Score(*u.feats, &loglikes));
    UtteranceAlignment& aligned =
        results.emplace_back(AlignUtterance(options_, model_, *u.graph, loglikes));
    if (!posteriors || !aligned.status.ok()) continue;
    GMM_ASSIGN_OR_RETURN(
        const AlignGraph readied,
        PrepareAlignGraph(*u.graph, model_, options_.transition_scale, options_.self_loop_scale));
    GMM_ASSIGN_OR_RETURN(ForwardBackwardResult fb,
                         ForwardBackward(readied, model_, loglikes, options_.acoustic_scale));
    aligned.posteriors = std::move(fb.posteriors);
  }
  return results;
}

}  // namespace gmmscore

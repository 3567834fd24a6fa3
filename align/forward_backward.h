// The forward-backward pass over an alignment graph, in the log domain: the total log-likelihood
// of all paths of the utterance's length that end in a final state, and each frame's posteriors
// over the transition-ids on those paths (Kaldi's Posterior: per frame (transition-id, weight)
// pairs, the weights of a frame summing to 1), which Kaldi's gmm-acc-stats reads. Exact: every
// path counts, no beam. Epsilon arcs are followed within a frame in topological order (a graph
// with an epsilon cycle is refused).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "model/align_graph.h"
#include "model/transition_model.h"
#include "util/matrix.h"

namespace gmmscore {

using FramePosterior = std::vector<std::pair<int32_t, float>>;  // (transition-id, weight)

struct ForwardBackwardResult {
  // log sum over paths of exp(-(graph cost + acoustic_scale x acoustic cost)); -inf where no
  // path reaches a final state.
  double total_log_likelihood = 0.0;
  std::vector<FramePosterior> posteriors;  // per frame, transition-ids in increasing order
};

// graph carries its transition costs (align/transition_probs.h); loglikes is frames x
// model.NumPdfs(). InvalidArgument for a graph that does not fit the model or has an epsilon
// cycle; NotFound where no path of this length reaches a final state.
absl::StatusOr<ForwardBackwardResult> ForwardBackward(const AlignGraph& graph,
                                                      const TransitionModel& model,
                                                      const Matrix& loglikes, float acoustic_scale);

}  // namespace gmmscore

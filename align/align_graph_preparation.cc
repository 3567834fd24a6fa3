#include "align/align_graph_preparation.h"

#include "absl/strings/str_cat.h"
#include "align/transition_probs.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<AlignGraph> PrepareAlignGraph(AlignGraph graph, const TransitionModel& model,
                                             float transition_scale, float self_loop_scale) {
  if (absl::Status s = ValidateAlignGraph(graph, model.NumTransitionIds()); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the graph does not fit the model: ", s.message()));
  }
  if (graph.start < 0) return absl::InvalidArgumentError("empty decoding graph");
  GMM_RETURN_IF_ERROR(AddTransitionProbs(model, transition_scale, self_loop_scale, &graph));
  return graph;
}

absl::StatusOr<AlignGraph> PrepareExactAlignGraph(AlignGraph graph, const TransitionModel& model,
                                                  float transition_scale, float self_loop_scale) {
  GMM_ASSIGN_OR_RETURN(
      graph, PrepareAlignGraph(std::move(graph), model, transition_scale, self_loop_scale));
  GMM_RETURN_IF_ERROR(EpsilonDepth(graph).status());
  return graph;
}

}  // namespace gmmscore

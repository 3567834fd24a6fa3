#include "align/transition_probs.h"

#include "absl/strings/str_cat.h"

namespace gmmscore {

float ScaledTransitionLogProb(const TransitionModel& model, int32_t tid, float transition_scale,
                              float self_loop_scale) {
  const float log_prob = model.TransitionIdToLogProb(tid);
  if (transition_scale == self_loop_scale) return log_prob * transition_scale;
  if (model.IsSelfLoop(tid)) return self_loop_scale * log_prob;
  const float leave = model.NonSelfLoopLogProb(model.TransitionIdToTransitionState(tid));
  // log p(tid | the state is left) = log p(tid) - log(1 - p(self-loop)).
  return self_loop_scale * leave + transition_scale * (log_prob - leave);
}

absl::Status AddTransitionProbs(const TransitionModel& model, float transition_scale,
                                float self_loop_scale, AlignGraph* graph) {
  const int32_t num_tids = model.NumTransitionIds();
  for (int32_t s = 0; s < graph->num_states(); ++s) {
    for (int32_t a = graph->arc_begin[size_t(s)]; a < graph->arc_begin[size_t(s) + 1]; ++a) {
      GraphArc& arc = graph->arcs[size_t(a)];
      if (arc.ilabel == 0) continue;
      if (arc.ilabel < 0 || arc.ilabel > num_tids) {
        return absl::InvalidArgumentError(
            absl::StrCat("state ", s, ": input label ", arc.ilabel,
                         " is not a transition-id of the model (1 to ", num_tids, ")"));
      }
      arc.weight += -ScaledTransitionLogProb(model, arc.ilabel, transition_scale, self_loop_scale);
    }
  }
  return absl::OkStatus();
}

}  // namespace gmmscore

// Transition log-probabilities on a compiled training graph, as Kaldi's AddTransitionProbs adds
// them before alignment: every arc whose input label is a transition-id gets its cost raised by
// the negated, scaled log-probability of that transition. With different scales a self-loop is
// scaled by self_loop_scale, and a forward transition by transition_scale for its probability
// given that the state is left plus self_loop_scale for the probability of leaving.
#pragma once

#include "absl/status/status.h"
#include "model/align_graph.h"
#include "model/transition_model.h"

namespace gmmscore {

// Kaldi's scaled log-probability of transition-id tid (single precision, Kaldi's order of
// operations).
float ScaledTransitionLogProb(const TransitionModel& model, int32_t tid, float transition_scale,
                              float self_loop_scale);

// Adds the scaled transition costs to every arc of graph whose input label is a transition-id.
// InvalidArgument, naming the state and label, for an input label that is neither 0 nor a
// transition-id of the model (the graph was compiled for another model).
absl::Status AddTransitionProbs(const TransitionModel& model, float transition_scale,
                                float self_loop_scale, AlignGraph* graph);

}  // namespace gmmscore

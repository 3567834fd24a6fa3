// A compiled training graph readied for Viterbi alignment, the one way every aligner readies it
// (the CPU's AlignUtterance, the device aligner, the daemon's Align): checked against the model
// (every input label 0 or one of its transition-ids), a start state, and the transition
// log-probabilities added with Kaldi's scales (align/transition_probs.h). Not here, since not
// every use wants it: Kaldi's --careful graph (align/careful_graph.h), which is made from the
// readied graph, while posteriors are computed on the readied graph itself.
#pragma once

#include "absl/status/statusor.h"
#include "model/align_graph.h"
#include "model/transition_model.h"

namespace gmmscore {

// InvalidArgument "the graph does not fit the model: ..." or "empty decoding graph".
absl::StatusOr<AlignGraph> PrepareAlignGraph(AlignGraph graph, const TransitionModel& model,
                                             float transition_scale, float self_loop_scale);

// For an exact aligner that follows epsilon arcs in rounds (a device's, kernels/batch_viterbi.h):
// PrepareAlignGraph, and the graph's epsilon depth bounded (EpsilonDepth, model/align_graph.h:
// InvalidArgument for an epsilon cycle).
absl::StatusOr<AlignGraph> PrepareExactAlignGraph(AlignGraph graph, const TransitionModel& model,
                                                  float transition_scale, float self_loop_scale);

}  // namespace gmmscore

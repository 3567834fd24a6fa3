// Kaldi's "careful" alignment (gmm-align-compiled --careful=true): the graph is concatenated with
// a copy of itself whose final weights are removed and whose new start (final, with one epsilon
// arc to the old start) is the only final state of the copy. Paths that leave the real graph's
// final states early compete with the real ones in the beam, so an utterance whose transcript
// does not fit tends to fail rather than align badly. The arcs and their order are those OpenFst's
// Concat gives, so that the decoder visits them as Kaldi's does.
#pragma once

#include "model/align_graph.h"

namespace gmmscore {

// The careful form of graph (graph itself where it is empty).
AlignGraph MakeCarefulGraph(const AlignGraph& graph);

}  // namespace gmmscore

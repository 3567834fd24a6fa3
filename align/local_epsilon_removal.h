// Local epsilon removal, as Kaldi's RemoveEpsLocal (compile-train-graphs --rm-eps) does it: some,
// not necessarily all, epsilons go, and the graph never gains arcs or states. Each arc, in state
// order and then arc order (arcs added on the way are visited too), is tried against the state it
// enters, unless it is a self-loop:
//
//   - that state has this one arc in (the start counts as an arc in) and more than one way out
//     (being final counts as one): each arc out of it that can be joined with this one (no two
//     input labels and no two output labels between them) is moved back, joined, onto this
//     arc's state, and a final cost that can (this arc has no labels) likewise; this arc keeps
//     what could not be joined, its cost raised by the removed share's cost in the tropical
//     semiring, which the state's remaining arcs give back;
//   - that state has one way out: where this arc and that way join, the joined arc (or final
//     cost) replaces this arc, and the way out goes where this arc was its only way in.
//
// Costs are tropical: a path keeps its cost, and the best of several paths with the same labels
// keeps its cost (the probabilities of the log semiring are not kept). States left unreachable,
// or from which no final state can be reached, are removed; the others keep their order.
#pragma once

#include "model/align_graph.h"

namespace gmmscore {

void RemoveEpsilonsLocally(VectorGraph& graph);

}  // namespace gmmscore

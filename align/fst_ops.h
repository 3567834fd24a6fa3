// The weighted-FST operations that compiling a training graph needs, done by OpenFst on graphs in
// gmmscore's own forms (model/align_graph.h), so that only fst_ops.cc sees OpenFst's headers
// (which compile as C++17 only). Weights are tropical costs throughout; "in the log semiring" means
// the weights are read as -log probabilities that add by log-sum-exp for the length of that step.
//
// The algorithms are OpenFst's: composition (Mohri, Pereira and Riley, "Weighted finite-state
// transducers in speech recognition"), epsilon removal and determinization (Mohri, "Finite-state
// transducers in language and speech processing"), and minimization of the acceptor that encodes
// each arc's labels and weight as one label.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "model/align_graph.h"

namespace gmmscore {

// A graph being built: arcs per state, in the order they were added.
struct VectorGraph {
  int32_t start = -1;
  std::vector<float> final_cost;  // AlignGraph::kNotFinal where not final
  std::vector<std::vector<GraphArc>> arcs;

  int32_t AddState() {
    final_cost.push_back(AlignGraph::kNotFinal);
    arcs.emplace_back();
    return static_cast<int32_t>(final_cost.size()) - 1;
  }
  int32_t num_states() const { return static_cast<int32_t>(final_cost.size()); }
};

AlignGraph ToAlignGraph(const VectorGraph& graph);
VectorGraph ToVectorGraph(const AlignGraph& graph);

// a ∘ b: a's output labels meet b's input labels; only states on a path from the start to a final
// state are kept.
VectorGraph Compose(const VectorGraph& a, const VectorGraph& b);

// Epsilon removal and determinization in the log semiring (paths with the same input add their
// probabilities); then input labels above `max_kept_ilabel` (disambiguation symbols, there only to
// make the graph determinizable) become epsilon; then costs are rounded to multiples of `delta`
// and the graph is minimized as an acceptor of (input, output, cost) triples, without moving
// costs or labels along paths. Errors where the graph is not functional (one input sequence, two
// output sequences) or has an arc with no input label but an output label.
absl::StatusOr<VectorGraph> DeterminizeAndMinimize(const VectorGraph& graph, float delta,
                                                   int32_t max_kept_ilabel);

}  // namespace gmmscore

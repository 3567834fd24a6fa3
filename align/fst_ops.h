// The weighted-FST operations that compiling a training graph needs, done by OpenFst on graphs in
// gmmscore's own forms (model/align_graph.h) through fst/openfst.h (see there for the
// algorithms). Each can fail where OpenFst is loaded when first needed and cannot be. Weights are
// tropical costs throughout; "in the log semiring" means the weights are read as -log
// probabilities that add by log-sum-exp for the length of that step.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "model/align_graph.h"

namespace gmmscore {

// a ∘ b: a's output labels meet b's input labels; only states on a path from the start to a final
// state are kept.
absl::StatusOr<VectorGraph> Compose(const VectorGraph& a, const VectorGraph& b);

// Epsilon removal and determinization in the log semiring (paths with the same input add their
// probabilities); then input labels above `max_kept_ilabel` (disambiguation symbols, there only to
// make the graph determinizable) become epsilon. States are numbered, and arcs ordered, as Kaldi's
// DeterminizeStar makes them. Errors where the graph is not functional (one input sequence, two
// output sequences) or has an arc with no input label but an output label.
absl::StatusOr<VectorGraph> Determinize(const VectorGraph& graph, float delta,
                                        int32_t max_kept_ilabel);

// Costs rounded to multiples of `delta`, then minimization as an acceptor of (input, output,
// cost) triples, without moving costs or labels along paths (Kaldi's MinimizeEncoded).
absl::StatusOr<VectorGraph> MinimizeEncoded(const VectorGraph& graph, float delta);

}  // namespace gmmscore

// A decoding graph for alignment, in one compact form that every aligner reads: states numbered
// from 0, the arcs of each state contiguous (CSR by source state), in the order the source graph
// listed them. Kaldi's compiled training graphs (OpenFst VectorFsts whose input labels are
// transition-ids and output labels words, tropical weights) are converted into it where they are
// read (formats/kaldi_fst.h), so that OpenFst stays out of the compute layer.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gmmscore {

struct GraphArc {
  int32_t ilabel = 0;   // transition-id; 0: epsilon (no frame consumed)
  int32_t olabel = 0;   // word; 0: none
  float weight = 0.0f;  // cost (tropical: negated log-probability)
  int32_t next = 0;     // destination state
};

struct AlignGraph {
  static constexpr float kNotFinal = std::numeric_limits<float>::infinity();

  int32_t start = -1;              // -1: the empty graph
  std::vector<float> final_cost;   // per state; kNotFinal where the state is not final
  std::vector<int32_t> arc_begin;  // per state, and one past the last: arcs of s are
                                   // [arc_begin[s], arc_begin[s + 1])
  std::vector<GraphArc> arcs;

  int32_t num_states() const { return static_cast<int32_t>(final_cost.size()); }
  int64_t num_arcs() const { return static_cast<int64_t>(arcs.size()); }
};

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

// Checks the structure: CSR offsets, destinations and the start in range, weights not NaN,
// input labels in [0, max_ilabel]. The message names the state and arc.
absl::Status ValidateAlignGraph(const AlignGraph& graph, int32_t max_ilabel);

// The number of arcs on the longest path of epsilon arcs (input label 0), which a decoder that
// follows epsilon arcs in rounds needs; InvalidArgument where they form a cycle.
absl::StatusOr<int32_t> EpsilonDepth(const AlignGraph& graph);

}  // namespace gmmscore

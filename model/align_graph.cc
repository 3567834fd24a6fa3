#include "model/align_graph.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"

namespace gmmscore {

absl::Status ValidateAlignGraph(const AlignGraph& graph, int32_t max_ilabel) {
  const int32_t states = graph.num_states();
  if (graph.arc_begin.size() != size_t(states) + 1 || graph.arc_begin.front() != 0 ||
      graph.arc_begin.back() != graph.num_arcs()) {
    return absl::InvalidArgumentError("the graph's arc offsets do not match its states and arcs");
  }
  if (graph.start < -1 || graph.start >= states) {
    return absl::InvalidArgumentError(
        absl::StrCat("start state ", graph.start, " of a graph of ", states, " states"));
  }
  for (int32_t s = 0; s < states; ++s) {
    if (std::isnan(graph.final_cost[size_t(s)])) {
      return absl::InvalidArgumentError(absl::StrCat("state ", s, ": final weight is NaN"));
    }
    if (graph.arc_begin[size_t(s)] > graph.arc_begin[size_t(s) + 1]) {
      return absl::InvalidArgumentError(absl::StrCat("state ", s, ": arc offsets decrease"));
    }
    for (int32_t a = graph.arc_begin[size_t(s)]; a < graph.arc_begin[size_t(s) + 1]; ++a) {
      const GraphArc& arc = graph.arcs[size_t(a)];
      if (arc.next < 0 || arc.next >= states || arc.ilabel < 0 || arc.ilabel > max_ilabel ||
          std::isnan(arc.weight)) {
        return absl::InvalidArgumentError(
            absl::StrCat("state ", s, ", arc ", a - graph.arc_begin[size_t(s)], " (", arc.ilabel,
                         ":", arc.olabel, "/", arc.weight, " to ", arc.next, "): ",
                         arc.next < 0 || arc.next >= states ? "destination out of range"
                         : std::isnan(arc.weight)           ? "weight is NaN"
                                                            : "input label is not a "
                                                              "transition-id of the model"));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int32_t> EpsilonDepth(const AlignGraph& g) {
  // Kahn's algorithm over the epsilon arcs, the depth of each state as it is reached.
  const int32_t n = g.num_states();
  std::vector<int32_t> indegree(static_cast<size_t>(n), 0), depth(static_cast<size_t>(n), 0), ready;
  for (const GraphArc& arc : g.arcs) {
    if (arc.ilabel == 0) ++indegree[size_t(arc.next)];
  }
  for (int32_t s = 0; s < n; ++s) {
    if (indegree[size_t(s)] == 0) ready.push_back(s);
  }
  int32_t seen = 0, longest = 0;
  while (!ready.empty()) {
    const int32_t s = ready.back();
    ready.pop_back();
    ++seen;
    for (int32_t a = g.arc_begin[size_t(s)]; a < g.arc_begin[size_t(s) + 1]; ++a) {
      const GraphArc& arc = g.arcs[size_t(a)];
      if (arc.ilabel != 0) continue;
      depth[size_t(arc.next)] = std::max(depth[size_t(arc.next)], depth[size_t(s)] + 1);
      longest = std::max(longest, depth[size_t(arc.next)]);
      if (--indegree[size_t(arc.next)] == 0) ready.push_back(arc.next);
    }
  }
  if (seen != n) return absl::InvalidArgumentError("epsilon arcs form a cycle");
  return longest;
}

AlignGraph ToAlignGraph(const VectorGraph& graph) {
  AlignGraph out;
  out.start = graph.start;
  out.final_cost = graph.final_cost;
  out.arc_begin.reserve(graph.arcs.size() + 1);
  out.arc_begin.push_back(0);
  for (const auto& arcs : graph.arcs) {
    out.arcs.insert(out.arcs.end(), arcs.begin(), arcs.end());
    out.arc_begin.push_back(static_cast<int32_t>(out.arcs.size()));
  }
  return out;
}

VectorGraph ToVectorGraph(const AlignGraph& graph) {
  VectorGraph out;
  out.start = graph.start;
  out.final_cost = graph.final_cost;
  out.arcs.resize(graph.final_cost.size());
  for (int32_t s = 0; s < graph.num_states(); ++s) {
    out.arcs[s].assign(graph.arcs.begin() + graph.arc_begin[s],
                       graph.arcs.begin() + graph.arc_begin[s + 1]);
  }
  return out;
}

}  // namespace gmmscore

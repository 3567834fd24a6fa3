#include "align/careful_graph.h"

namespace gmmscore {

AlignGraph MakeCarefulGraph(const AlignGraph& graph) {
  if (graph.start < 0 || graph.num_states() == 0) return graph;
  const int32_t n = graph.num_states();
  // States 0..n-1: the graph, each final state's weight moved onto an epsilon arc (appended last)
  // to the copy's new start 2n. States n..2n-1: the copy, no final weights. State 2n: the new
  // start, final with weight 0, one epsilon arc to the copy of the old start.
  AlignGraph out;
  out.start = graph.start;
  out.final_cost.assign(size_t(2 * n + 1), AlignGraph::kNotFinal);
  out.final_cost[size_t(2 * n)] = 0.0f;
  out.arc_begin.reserve(size_t(2 * n + 2));
  out.arcs.reserve(2 * graph.arcs.size() + size_t(n) + 1);
  for (int32_t s = 0; s < n; ++s) {
    out.arc_begin.push_back(static_cast<int32_t>(out.arcs.size()));
    for (int32_t a = graph.arc_begin[size_t(s)]; a < graph.arc_begin[size_t(s) + 1]; ++a) {
      out.arcs.push_back(graph.arcs[size_t(a)]);
    }
    if (graph.final_cost[size_t(s)] != AlignGraph::kNotFinal) {
      out.arcs.push_back({0, 0, graph.final_cost[size_t(s)], 2 * n});
    }
  }
  for (int32_t s = 0; s < n; ++s) {
    out.arc_begin.push_back(static_cast<int32_t>(out.arcs.size()));
    for (int32_t a = graph.arc_begin[size_t(s)]; a < graph.arc_begin[size_t(s) + 1]; ++a) {
      GraphArc arc = graph.arcs[size_t(a)];
      arc.next += n;
      out.arcs.push_back(arc);
    }
  }
  out.arc_begin.push_back(static_cast<int32_t>(out.arcs.size()));
  out.arcs.push_back({0, 0, 0.0f, graph.start + n});
  out.arc_begin.push_back(static_cast<int32_t>(out.arcs.size()));
  return out;
}

}  // namespace gmmscore

#include "align/fst_ops.h"

#include <fst/arc-map.h>
#include <fst/arcsort.h>
#include <fst/compose.h>
#include <fst/determinize.h>
#include <fst/encode.h>
#include <fst/minimize.h>
#include <fst/rmepsilon.h>
#include <fst/statesort.h>
#include <fst/vector-fst.h>

#include <deque>
#include <string>
#include <utility>
#include <vector>

namespace gmmscore {
namespace {

template <class Arc>
fst::VectorFst<Arc> ToFst(const VectorGraph& graph) {
  using Weight = typename Arc::Weight;
  fst::VectorFst<Arc> out;
  out.ReserveStates(graph.num_states());
  for (int32_t s = 0; s < graph.num_states(); ++s) out.AddState();
  if (graph.start >= 0) out.SetStart(graph.start);
  for (int32_t s = 0; s < graph.num_states(); ++s) {
    if (graph.final_cost[s] != AlignGraph::kNotFinal) out.SetFinal(s, Weight(graph.final_cost[s]));
    out.ReserveArcs(s, graph.arcs[s].size());
    for (const GraphArc& arc : graph.arcs[s]) {
      out.AddArc(s, Arc(arc.ilabel, arc.olabel, Weight(arc.weight), arc.next));
    }
  }
  return out;
}

template <class Arc>
VectorGraph FromFst(const fst::VectorFst<Arc>& in) {
  VectorGraph graph;
  for (int32_t s = 0; s < in.NumStates(); ++s) graph.AddState();
  graph.start = in.Start() == fst::kNoStateId ? -1 : static_cast<int32_t>(in.Start());
  for (int32_t s = 0; s < in.NumStates(); ++s) {
    const auto final_weight = in.Final(s);
    if (final_weight != Arc::Weight::Zero()) graph.final_cost[s] = final_weight.Value();
    for (fst::ArcIterator<fst::VectorFst<Arc>> it(in, s); !it.Done(); it.Next()) {
      const Arc& arc = it.Value();
      graph.arcs[s].push_back(GraphArc{static_cast<int32_t>(arc.ilabel),
                                       static_cast<int32_t>(arc.olabel), arc.weight.Value(),
                                       static_cast<int32_t>(arc.nextstate)});
    }
  }
  return graph;
}

// Numbers a determinized graph's states, and orders each state's arcs, as Kaldi's DeterminizeStar
// makes them: arcs by input label; states in the order they are first reached, the state reached
// last processed first. Minimization keeps this order (its encoded labels are numbered in the
// order they are met), and Kaldi's equal alignment of a flat start draws arcs by their position,
// so the same graph in another order would start training from other alignments.
void NumberAsKaldi(fst::VectorFst<fst::LogArc>* graph) {
  using StateId = fst::LogArc::StateId;
  if (graph->Start() == fst::kNoStateId) return;
  fst::ArcSort(graph, fst::ILabelCompare<fst::LogArc>());
  std::vector<StateId> order(graph->NumStates(), fst::kNoStateId);
  std::deque<StateId> pending;
  StateId next = 0;
  order[graph->Start()] = next++;
  pending.push_front(graph->Start());
  while (!pending.empty()) {
    const StateId s = pending.front();
    pending.pop_front();
    for (fst::ArcIterator<fst::VectorFst<fst::LogArc>> it(*graph, s); !it.Done(); it.Next()) {
      const StateId to = it.Value().nextstate;
      if (order[to] != fst::kNoStateId) continue;
      order[to] = next++;
      pending.push_front(to);
    }
  }
  // States no path reaches (determinization makes none) keep their relative order at the end.
  for (StateId s = 0; s < graph->NumStates(); ++s) {
    if (order[s] == fst::kNoStateId) order[s] = next++;
  }
  fst::StateSort(graph, order);
}

}  // namespace

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

VectorGraph Compose(const VectorGraph& a, const VectorGraph& b) {
  fst::StdVectorFst left = ToFst<fst::StdArc>(a);
  fst::StdVectorFst right = ToFst<fst::StdArc>(b);
  fst::ArcSort(&left, fst::OLabelCompare<fst::StdArc>());
  fst::ArcSort(&right, fst::ILabelCompare<fst::StdArc>());
  fst::StdVectorFst composed;
  fst::Compose(left, right, &composed);  // connected (ComposeOptions' default)
  return FromFst(composed);
}

absl::StatusOr<VectorGraph> DeterminizeAndMinimize(const VectorGraph& graph, float delta,
                                                   int32_t max_kept_ilabel) {
  // OpenFst's epsilon removal removes only arcs without either label; determinization would read
  // an input epsilon with an output label as a symbol.
  for (int32_t s = 0; s < graph.num_states(); ++s) {
    for (const GraphArc& arc : graph.arcs[s]) {
      if (arc.ilabel == 0 && arc.olabel != 0) {
        return absl::InvalidArgumentError("state " + std::to_string(s) +
                                          ": an arc with output label " +
                                          std::to_string(arc.olabel) + " has no input label");
      }
    }
  }
  fst::VectorFst<fst::LogArc> log_graph = ToFst<fst::LogArc>(graph);
  fst::RmEpsilon(&log_graph);
  fst::VectorFst<fst::LogArc> determinized;
  fst::Determinize(
      log_graph, &determinized,
      fst::DeterminizeOptions<fst::LogArc>(delta, fst::LogWeight::Zero(), fst::kNoStateId, 0,
                                           fst::DETERMINIZE_FUNCTIONAL));
  if (determinized.Properties(fst::kError, false)) {
    return absl::InvalidArgumentError(
        "the graph cannot be determinized: one input sequence has two output sequences "
        "(is a disambiguation symbol missing from the lexicon?)");
  }
  NumberAsKaldi(&determinized);
  fst::StdVectorFst tropical;
  fst::ArcMap(determinized, &tropical, fst::WeightConvertMapper<fst::LogArc, fst::StdArc>());
  for (fst::StateIterator<fst::StdVectorFst> states(tropical); !states.Done(); states.Next()) {
    for (fst::MutableArcIterator<fst::StdVectorFst> it(&tropical, states.Value()); !it.Done();
         it.Next()) {
      fst::StdArc arc = it.Value();
      if (arc.ilabel > max_kept_ilabel) {
        arc.ilabel = 0;
        it.SetValue(arc);
      }
    }
  }
  // Costs rounded so that costs equal up to float noise make equal labels below.
  fst::ArcMap(&tropical, fst::QuantizeMapper<fst::StdArc>(delta));
  fst::EncodeMapper<fst::StdArc> encoder(fst::kEncodeLabels | fst::kEncodeWeights, fst::ENCODE);
  fst::Encode(&tropical, &encoder);
  fst::internal::AcceptorMinimize(&tropical);
  fst::Decode(&tropical, encoder);
  return FromFst(tropical);
}

}  // namespace gmmscore

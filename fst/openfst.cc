// fst/openfst.h's functions, done by OpenFst. No Abseil here: the module (openfst_module.cc) links
// only OpenFst and the C++ runtime.
#include <fst/arc-map.h>
#include <fst/arcsort.h>
#include <fst/compose.h>
#include <fst/determinize.h>
#include <fst/encode.h>
#include <fst/minimize.h>
#include <fst/rmepsilon.h>
#include <fst/statesort.h>
#include <fst/symbol-table.h>
#include <fst/vector-fst.h>

#include <deque>
#include <fstream>
#include <memory>
#include <sstream>

#include "fst/openfst_functions.h"

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

bool ReadVectorFst(const std::string& bytes, const std::string& name, VectorGraph* graph,
                   std::string* error) {
  std::istringstream is(bytes);
  const std::unique_ptr<fst::StdVectorFst> read(
      fst::StdVectorFst::Read(is, fst::FstReadOptions(name)));
  if (read == nullptr) {
    *error = "OpenFst could not read the FST";
    return false;
  }
  *graph = FromFst(*read);
  return true;
}

bool WriteVectorFst(const VectorGraph& graph, const std::string& name, std::string* bytes,
                    std::string* error) {
  std::ostringstream os;
  if (!ToFst<fst::StdArc>(graph).Write(os, fst::FstWriteOptions(name))) {
    *error = "OpenFst could not write the FST";
    return false;
  }
  *bytes = std::move(os).str();
  return true;
}

bool ReadSymbolTable(const std::string& path, std::vector<std::pair<int64_t, std::string>>* symbols,
                     std::string* error) {
  std::ifstream is(path);
  const std::unique_ptr<fst::SymbolTable> table(fst::SymbolTable::ReadText(is, path));
  if (table == nullptr || table->NumSymbols() == 0) {
    *error = "Error opening symbol table file " + path;
    return false;
  }
  symbols->clear();
  for (const auto& item : *table) symbols->emplace_back(item.Label(), table->Find(item.Label()));
  return true;
}

bool Compose(const VectorGraph& a, const VectorGraph& b, VectorGraph* out, std::string*) {
  fst::StdVectorFst left = ToFst<fst::StdArc>(a);
  fst::StdVectorFst right = ToFst<fst::StdArc>(b);
  fst::ArcSort(&left, fst::OLabelCompare<fst::StdArc>());
  fst::ArcSort(&right, fst::ILabelCompare<fst::StdArc>());
  fst::StdVectorFst composed;
  fst::Compose(left, right, &composed);  // connected (ComposeOptions' default)
  *out = FromFst(composed);
  return true;
}

bool Determinize(const VectorGraph& graph, float delta, int32_t max_kept_ilabel, VectorGraph* out,
                 std::string* error) {
  // OpenFst's epsilon removal removes only arcs without either label; determinization would read
  // an input epsilon with an output label as a symbol.
  for (int32_t s = 0; s < graph.num_states(); ++s) {
    for (const GraphArc& arc : graph.arcs[s]) {
      if (arc.ilabel == 0 && arc.olabel != 0) {
        *error = "state " + std::to_string(s) + ": an arc with output label " +
                 std::to_string(arc.olabel) + " has no input label";
        return false;
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
    *error =
        "the graph cannot be determinized: one input sequence has two output sequences "
        "(is a disambiguation symbol missing from the lexicon?)";
    return false;
  }
  NumberAsKaldi(&determinized);
  *out = FromFst(determinized);
  for (std::vector<GraphArc>& arcs : out->arcs) {
    for (GraphArc& arc : arcs) {
      if (arc.ilabel > max_kept_ilabel) arc.ilabel = 0;
    }
  }
  return true;
}

bool MinimizeEncoded(const VectorGraph& graph, float delta, VectorGraph* out, std::string*) {
  fst::StdVectorFst tropical = ToFst<fst::StdArc>(graph);
  // Costs rounded so that costs equal up to float noise make equal labels below.
  fst::ArcMap(&tropical, fst::QuantizeMapper<fst::StdArc>(delta));
  fst::EncodeMapper<fst::StdArc> encoder(fst::kEncodeLabels | fst::kEncodeWeights, fst::ENCODE);
  fst::Encode(&tropical, &encoder);
  fst::internal::AcceptorMinimize(&tropical);
  fst::Decode(&tropical, encoder);
  *out = FromFst(tropical);
  return true;
}

}  // namespace

const OpenFstFunctions& OpenFstImplementation() {
  static const OpenFstFunctions functions = [] {
    OpenFstFunctions f;
    f.read_vector_fst = &ReadVectorFst;
    f.write_vector_fst = &WriteVectorFst;
    f.read_symbol_table = &ReadSymbolTable;
    f.compose = &Compose;
    f.determinize = &Determinize;
    f.minimize_encoded = &MinimizeEncoded;
    return f;
  }();
  return functions;
}

}  // namespace gmmscore

#include "align/training_graph_compiler.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "align/local_epsilon_removal.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// Kaldi's delta for determinization and for rounding costs before minimization.
constexpr float kDelta = 1.0f / 1024.0f;

// The inverse of the context transducer, expanded as composition reaches it: its states are the
// last width - 1 phones read, its output labels index `windows` (0: epsilon; a window of phones;
// {0}: the pseudo-epsilon at the start of right-context systems; {-d}: disambiguation symbol d).
class InverseContext {
 public:
  InverseContext(const PhoneContext& context, const std::vector<int32_t>& phones,
                 const std::vector<int32_t>& disambig, int32_t subsequential)
      : context_(context), phones_(phones), disambig_(disambig), subsequential_(subsequential) {
    LabelOf({});
    StateOf(std::vector<int32_t>(context.width - 1, 0));
    const bool has_right_context = context.width > context.central + 1;
    pseudo_epsilon_ = has_right_context && !disambig.empty() ? LabelOf({0}) : 0;
  }

  bool IsFinal(int32_t state) const {
    return context_.central == context_.width - 1 ||
           histories_[state][context_.central] == subsequential_;
  }

  // The arc reading `label` from `state`: (output label, next state), or nothing where the
  // label cannot follow. Errors on a label that is none of phone, disambiguation symbol and
  // subsequential symbol.
  absl::StatusOr<std::optional<std::pair<int32_t, int32_t>>> Arc(int32_t state, int32_t label) {
    if (std::binary_search(disambig_.begin(), disambig_.end(), label)) {
      return std::make_pair(LabelOf({-label}), state);
    }
    const std::vector<int32_t> history = histories_[state];
    const bool is_phone = std::binary_search(phones_.begin(), phones_.end(), label);
    if (is_phone) {
      if (!history.empty() && history.back() == subsequential_) return std::nullopt;
    } else if (label == subsequential_) {
      if (context_.central + 1 == context_.width || history[context_.central] == subsequential_) {
        return std::nullopt;
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "the lexicon reads label ", label, ", which is neither a phone of the model nor a ",
          "disambiguation symbol (--read-disambig-syms)"));
    }
    std::vector<int32_t> window = history;
    window.push_back(label);
    for (int32_t i = context_.central + 1; i < context_.width; ++i) {
      if (window[i] == subsequential_) window[i] = 0;
    }
    std::vector<int32_t> next = history;
    if (!next.empty()) {
      next.erase(next.begin());
      next.push_back(label);
    }
    const int32_t output = window[context_.central] == 0 ? pseudo_epsilon_ : LabelOf(window);
    return std::make_pair(output, StateOf(next));
  }

  const std::vector<std::vector<int32_t>>& windows() const { return windows_; }

 private:
  int32_t LabelOf(const std::vector<int32_t>& window) {
    auto [it, inserted] = label_ids_.emplace(window, static_cast<int32_t>(windows_.size()));
    if (inserted) windows_.push_back(window);
    return it->second;
  }
  int32_t StateOf(const std::vector<int32_t>& history) {
    auto [it, inserted] = state_ids_.emplace(history, static_cast<int32_t>(histories_.size()));
    if (inserted) histories_.push_back(history);
    return it->second;
  }

  const PhoneContext& context_;
  const std::vector<int32_t>& phones_;
  const std::vector<int32_t>& disambig_;
  int32_t subsequential_;
  int32_t pseudo_epsilon_ = 0;
  std::vector<std::vector<int32_t>> windows_;
  std::map<std::vector<int32_t>, int32_t> label_ids_;
  std::vector<std::vector<int32_t>> histories_;
  std::map<std::vector<int32_t>, int32_t> state_ids_;
};

// C ∘ lw, with C the inverse of `context`: input labels context windows, output labels lw's.
absl::StatusOr<VectorGraph> ComposeContext(const VectorGraph& lw, InverseContext& context) {
  VectorGraph out;
  if (lw.start < 0) return out;
  std::map<std::pair<int32_t, int32_t>, int32_t> ids;
  std::queue<std::pair<int32_t, int32_t>> pending;
  auto state_of = [&](int32_t lw_state, int32_t context_state) {
    auto [it, inserted] = ids.emplace(std::make_pair(lw_state, context_state), 0);
    if (inserted) {
      it->second = out.AddState();
      pending.emplace(lw_state, context_state);
    }
    return it->second;
  };
  out.start = state_of(lw.start, 0);
  while (!pending.empty()) {
    const auto [lw_state, context_state] = pending.front();
    pending.pop();
    const int32_t from = ids.at({lw_state, context_state});
    if (lw.final_cost[lw_state] != AlignGraph::kNotFinal && context.IsFinal(context_state)) {
      out.final_cost[from] = lw.final_cost[lw_state];
    }
    for (const GraphArc& arc : lw.arcs[lw_state]) {
      if (arc.ilabel == 0) {
        const int32_t to = state_of(arc.next, context_state);
        out.arcs[from].push_back(GraphArc{0, arc.olabel, arc.weight, to});
        continue;
      }
      auto step = context.Arc(context_state, arc.ilabel);
      if (!step.ok()) return step.status();
      if (!step->has_value()) continue;
      const auto [window, next_context] = **step;
      const int32_t to = state_of(arc.next, next_context);
      out.arcs[from].push_back(GraphArc{window, arc.olabel, arc.weight, to});
    }
  }
  return out;
}

int32_t NumPdfClasses(const std::vector<HmmState>& entry) {
  int32_t n = 0;
  for (const HmmState& state : entry) {
    n = std::max({n, state.forward_pdf_class + 1, state.self_loop_pdf_class + 1});
  }
  return n;
}

absl::StatusOr<int32_t> TransitionStateOf(const TransitionModel& model,
                                          const TransitionTuple& tuple) {
  const auto& tuples = model.tuples();
  auto key = [](const TransitionTuple& t) {
    return std::make_tuple(t.phone, t.hmm_state, t.forward_pdf, t.self_loop_pdf);
  };
  auto it = std::lower_bound(
      tuples.begin(), tuples.end(), tuple,
      [&](const TransitionTuple& a, const TransitionTuple& b) { return key(a) < key(b); });
  if (it == tuples.end() || !(*it == tuple)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the model has no transition-state for phone ", tuple.phone, ", HMM state ",
                     tuple.hmm_state, ", pdfs ", tuple.forward_pdf, "/", tuple.self_loop_pdf,
                     ": do the tree and the model belong together?"));
  }
  return static_cast<int32_t>(it - tuples.begin()) + 1;
}

// One window's HMM as an acceptor of transition-ids, without self-loops, from its first state to
// its last; non-emitting states read epsilon.
absl::StatusOr<VectorGraph> WindowHmm(const TransitionModel& model, const PhoneContext& context,
                                      const std::vector<int32_t>& window, float scale) {
  const int32_t phone = window[context.central];
  const HmmTopology& topology = model.topology();
  if (phone <= 0 || phone >= static_cast<int32_t>(topology.phone_to_entry.size()) ||
      topology.phone_to_entry[phone] < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("phone ", phone, " is not in the model's topology"));
  }
  const std::vector<HmmState>& entry = topology.TopologyForPhone(phone);
  std::vector<int32_t> pdfs(NumPdfClasses(entry));
  for (int32_t pdf_class = 0; pdf_class < static_cast<int32_t>(pdfs.size()); ++pdf_class) {
    std::optional<int32_t> pdf = context.pdf(window, pdf_class);
    if (!pdf) {
      return absl::InvalidArgumentError(
          absl::StrCat("the tree has no pdf for pdf-class ", pdf_class, " of the window ",
                       absl::StrJoin(window, " "), ": do the tree, the model and the lexicon ",
                       "belong together?"));
    }
    pdfs[pdf_class] = *pdf;
  }
  VectorGraph hmm;
  for (size_t i = 0; i < entry.size(); ++i) hmm.AddState();
  hmm.start = 0;
  hmm.final_cost.back() = 0.0f;
  for (int32_t s = 0; s < static_cast<int32_t>(entry.size()); ++s) {
    const HmmState& state = entry[s];
    int32_t tstate = 0;
    if (state.forward_pdf_class != kNoPdf) {
      auto found = TransitionStateOf(
          model, {phone, s, pdfs[state.forward_pdf_class], pdfs[state.self_loop_pdf_class]});
      if (!found.ok()) return found.status();
      tstate = *found;
    }
    for (int32_t t = 0; t < static_cast<int32_t>(state.transitions.size()); ++t) {
      const auto [dest, prob] = state.transitions[t];
      if (dest == s) continue;  // self-loops come last (AddSelfLoops)
      float log_prob;
      int32_t label = 0;
      if (tstate == 0) {
        log_prob = std::log(prob);
      } else {
        label = model.FirstTransitionId(tstate) + t;
        log_prob = model.TransitionIdToLogProb(label) - model.NonSelfLoopLogProb(tstate);
      }
      hmm.arcs[s].push_back(GraphArc{label, label, -log_prob * scale, dest});
    }
  }
  return hmm;
}

// Disambiguation windows: a disambiguation symbol, or the pseudo-epsilon {0}.
bool IsDisambiguationWindow(const std::vector<int32_t>& window) {
  return window[0] < 0 || (window[0] == 0 && window.size() == 1);
}

// H: from one loop state, each window's HMM, its window label on the arcs leaving the HMM's start
// (or on an epsilon arc into the start, where paths come back to it), back to the loop state at
// its end. Disambiguation windows read symbols numbered after the transition-ids, which become
// epsilons after determinization.
absl::StatusOr<VectorGraph> HTransducer(const TransitionModel& model, const PhoneContext& context,
                                        const std::vector<std::vector<int32_t>>& windows,
                                        float transition_scale) {
  VectorGraph h;
  h.start = h.AddState();
  h.final_cost[h.start] = 0.0f;
  int32_t next_disambig = model.NumTransitionIds() + 1;
  for (int32_t j = 1; j < static_cast<int32_t>(windows.size()); ++j) {
    const std::vector<int32_t>& window = windows[j];
    VectorGraph hmm;
    if (IsDisambiguationWindow(window)) {
      hmm.start = hmm.AddState();
      const int32_t end = hmm.AddState();
      hmm.final_cost[end] = 0.0f;
      hmm.arcs[hmm.start].push_back(GraphArc{next_disambig, next_disambig, 0.0f, end});
      ++next_disambig;
    } else {
      auto built = WindowHmm(model, context, window, transition_scale);
      if (!built.ok()) return built.status();
      hmm = std::move(*built);
    }
    // The window's label goes on the arcs leaving the HMM's start, which becomes the loop state,
    // where no path comes back to the start; otherwise on an epsilon arc into the start. (Kaldi
    // puts it on an epsilon arc wherever the start has more than one arc, and its determinization
    // moves it onto the arcs that follow; OpenFst's epsilon removal would not.)
    bool start_reentered = hmm.final_cost[hmm.start] != AlignGraph::kNotFinal;
    for (const auto& arcs : hmm.arcs) {
      for (const GraphArc& arc : arcs) start_reentered |= arc.next == hmm.start;
    }
    const bool share_start = !start_reentered;
    std::vector<int32_t> map(hmm.num_states());
    for (int32_t s = 0; s < hmm.num_states(); ++s) {
      map[s] = s == hmm.start && share_start ? h.start : h.AddState();
    }
    if (!share_start) h.arcs[h.start].push_back(GraphArc{0, j, 0.0f, map[hmm.start]});
    for (int32_t s = 0; s < hmm.num_states(); ++s) {
      for (const GraphArc& arc : hmm.arcs[s]) {
        const int32_t olabel = s == hmm.start && share_start ? j : 0;
        h.arcs[map[s]].push_back(GraphArc{arc.ilabel, olabel, arc.weight, map[arc.next]});
      }
      if (hmm.final_cost[s] != AlignGraph::kNotFinal) {
        h.arcs[map[s]].push_back(GraphArc{0, 0, hmm.final_cost[s], h.start});
      }
    }
  }
  return h;
}

// The transition-state a label belongs to: -1 for none (kNoLabel), 0 for epsilon.
int32_t TransitionStateClass(const TransitionModel& model, int32_t label) {
  if (label < 0) return -1;
  if (label >= 1 && label <= model.NumTransitionIds()) {
    return model.TransitionIdToTransitionState(label);
  }
  return 0;
}

// Splits states entered by arcs of more than one transition-state (or by an epsilon and a
// transition-id, the start counting as entered by epsilon): an arc of class c into such a state
// goes to a new state for (state, c) instead, which has an epsilon arc to the state.
void MakeEnteringClassesUnique(const TransitionModel& model, VectorGraph& graph) {
  std::vector<int32_t> entering(graph.num_states(), -1);
  entering[graph.start] = 0;
  std::set<int32_t> split;
  for (int32_t s = 0; s < graph.num_states(); ++s) {
    for (const GraphArc& arc : graph.arcs[s]) {
      const int32_t c = TransitionStateClass(model, arc.ilabel);
      if (entering[arc.next] == -1) {
        entering[arc.next] = c;
      } else if (entering[arc.next] != c) {
        split.insert(arc.next);
      }
    }
  }
  if (split.empty()) return;
  std::map<std::pair<int32_t, int32_t>, int32_t> copies;
  const int32_t num_states = graph.num_states();
  for (int32_t s = 0; s < num_states; ++s) {
    for (size_t a = 0; a < graph.arcs[s].size(); ++a) {
      GraphArc arc = graph.arcs[s][a];
      if (arc.ilabel == 0 || !split.contains(arc.next)) continue;
      const auto key = std::make_pair(arc.next, TransitionStateClass(model, arc.ilabel));
      auto it = copies.find(key);
      if (it == copies.end()) {
        const int32_t copy = graph.AddState();
        graph.arcs[copy].push_back(GraphArc{0, 0, 0.0f, arc.next});
        it = copies.emplace(key, copy).first;
      }
      graph.arcs[s][a].next = it->second;
    }
  }
}

// Splits states left by arcs of more than one transition-state (a final state counting as left
// by epsilon): each such arc with an input label leaves from a new state instead, entered from
// the state by an epsilon arc that carries the arc's output label and cost.
void MakeLeavingClassesUnique(const TransitionModel& model, VectorGraph& graph) {
  const int32_t num_states = graph.num_states();
  for (int32_t s = 0; s < num_states; ++s) {
    std::set<int32_t> classes;
    for (const GraphArc& arc : graph.arcs[s]) {
      classes.insert(TransitionStateClass(model, arc.ilabel));
    }
    const bool final_with_label =
        graph.final_cost[s] != AlignGraph::kNotFinal && !classes.empty() && *classes.rbegin() > 0;
    if (classes.size() <= 1 && !final_with_label) continue;
    for (size_t a = 0; a < graph.arcs[s].size(); ++a) {
      const GraphArc arc = graph.arcs[s][a];
      if (arc.ilabel == 0) continue;
      const int32_t split = graph.AddState();
      graph.arcs[split].push_back(GraphArc{arc.ilabel, 0, 0.0f, arc.next});
      graph.arcs[s][a] = GraphArc{0, arc.olabel, arc.weight, split};
    }
  }
}

// Kaldi's AddSelfLoops: each state entered by a transition-state's arcs gets that
// transition-state's self-loop (reorder: after the forward transition; otherwise the state
// leaving by it gets it), and the arcs leaving it the cost of not taking the self-loop.
absl::Status AddSelfLoops(const TransitionModel& model, float scale, bool reorder,
                          VectorGraph& graph) {
  for (const auto& arcs : graph.arcs) {
    for (const GraphArc& arc : arcs) {
      if (arc.ilabel >= 1 && arc.ilabel <= model.NumTransitionIds() &&
          model.IsSelfLoop(arc.ilabel)) {
        return absl::InternalError("the graph already has self-loops");
      }
    }
  }
  if (reorder) {
    MakeEnteringClassesUnique(model, graph);
    std::vector<int32_t> entering(graph.num_states(), -1);
    for (const auto& arcs : graph.arcs) {
      for (const GraphArc& arc : arcs) {
        entering[arc.next] = TransitionStateClass(model, arc.ilabel);
      }
    }
    for (int32_t s = 0; s < graph.num_states(); ++s) {
      const int32_t tstate = entering[s];
      if (tstate <= 0) continue;
      const float forward = -model.NonSelfLoopLogProb(tstate) * scale;
      if (graph.final_cost[s] != AlignGraph::kNotFinal) graph.final_cost[s] += forward;
      for (GraphArc& arc : graph.arcs[s]) arc.weight += forward;
      if (const int32_t loop = model.SelfLoopOf(tstate); loop != 0) {
        graph.arcs[s].push_back(GraphArc{loop, 0, -model.TransitionIdToLogProb(loop) * scale, s});
      }
    }
    return absl::OkStatus();
  }
  MakeLeavingClassesUnique(model, graph);
  for (int32_t s = 0; s < graph.num_states(); ++s) {
    const int32_t tstate =
        graph.arcs[s].empty() ? -1 : TransitionStateClass(model, graph.arcs[s][0].ilabel);
    if (tstate <= 0) continue;
    const float forward = -model.NonSelfLoopLogProb(tstate) * scale;
    for (GraphArc& arc : graph.arcs[s]) arc.weight += forward;
    if (const int32_t loop = model.SelfLoopOf(tstate); loop != 0) {
      graph.arcs[s].push_back(GraphArc{loop, 0, -model.TransitionIdToLogProb(loop) * scale, s});
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TrainingGraphCompiler> TrainingGraphCompiler::Create(
    const TransitionModel& model, PhoneContext context, const AlignGraph& lexicon,
    std::vector<int32_t> disambig_symbols, const TrainingGraphOptions& options) {
  if (context.width < 1 || context.central < 0 || context.central >= context.width) {
    return absl::InvalidArgumentError(absl::StrCat("a context of width ", context.width,
                                                   " and central position ", context.central,
                                                   " is not a context"));
  }
  const std::vector<int32_t>& phones = model.topology().phones;
  if (phones.empty()) return absl::InvalidArgumentError("the model has no phones");
  std::sort(disambig_symbols.begin(), disambig_symbols.end());
  disambig_symbols.erase(std::unique(disambig_symbols.begin(), disambig_symbols.end()),
                         disambig_symbols.end());
  for (int32_t symbol : disambig_symbols) {
    if (std::binary_search(phones.begin(), phones.end(), symbol)) {
      return absl::InvalidArgumentError(
          absl::StrCat("disambiguation symbol ", symbol, " is also a phone"));
    }
  }
  int32_t subsequential = phones.back() + 1;
  if (!disambig_symbols.empty()) {
    subsequential = std::max(subsequential, disambig_symbols.back() + 1);
  }
  VectorGraph lex = ToVectorGraph(lexicon);
  if (lex.start < 0) return absl::InvalidArgumentError("the lexicon FST is empty");
  if (context.central != context.width - 1) {
    // Where the tree looks right, the lexicon's paths go on reading the subsequential symbol.
    std::vector<int32_t> finals;
    for (int32_t s = 0; s < lex.num_states(); ++s) {
      if (lex.final_cost[s] != AlignGraph::kNotFinal) finals.push_back(s);
    }
    const int32_t superfinal = lex.AddState();
    lex.arcs[superfinal].push_back(GraphArc{subsequential, 0, 0.0f, superfinal});
    lex.final_cost[superfinal] = 0.0f;
    for (int32_t s : finals) {
      lex.arcs[s].push_back(GraphArc{subsequential, 0, lex.final_cost[s], superfinal});
    }
  }
  return TrainingGraphCompiler(model, std::move(context), std::move(lex),
                               std::move(disambig_symbols), subsequential, options);
}

absl::StatusOr<AlignGraph> TrainingGraphCompiler::Compile(std::span<const int32_t> words) const {
  VectorGraph transcript;
  transcript.start = transcript.AddState();
  for (int32_t word : words) {
    const int32_t next = transcript.AddState();
    transcript.arcs[next - 1].push_back(GraphArc{word, word, 0.0f, next});
  }
  transcript.final_cost.back() = 0.0f;
  GMM_ASSIGN_OR_RETURN(const VectorGraph lw, Compose(lexicon_, transcript));
  if (lw.start < 0) return AlignGraph{};

  InverseContext context(context_, model_->topology().phones, disambig_symbols_,
                         subsequential_symbol_);
  auto clw = ComposeContext(lw, context);
  if (!clw.ok()) return clw.status();
  auto h = HTransducer(*model_, context_, context.windows(), options_.transition_scale);
  if (!h.ok()) return h.status();
  GMM_ASSIGN_OR_RETURN(const VectorGraph hclw, Compose(*h, *clw));
  if (hclw.start < 0) return AlignGraph{};
  GMM_ASSIGN_OR_RETURN(VectorGraph graph, Determinize(hclw, kDelta, model_->NumTransitionIds()));
  if (graph.start < 0) return AlignGraph{};
  // As Kaldi's, only where H had disambiguation symbols to remove.
  const auto& windows = context.windows();
  if (options_.rm_eps && std::any_of(windows.begin() + 1, windows.end(), IsDisambiguationWindow)) {
    RemoveEpsilonsLocally(graph);
    if (graph.start < 0) return AlignGraph{};
  }
  GMM_ASSIGN_OR_RETURN(graph, MinimizeEncoded(graph, kDelta));
  GMM_RETURN_IF_ERROR(AddSelfLoops(*model_, options_.self_loop_scale, options_.reorder, graph));
  return ToAlignGraph(graph);
}

}  // namespace gmmscore

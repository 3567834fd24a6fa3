#include "align/phone_graph.h"

#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace gmmscore {
namespace {

class GraphBuilder {
 public:
  int32_t AddState() {
    arcs_.emplace_back();
    return int32_t(arcs_.size()) - 1;
  }
  void AddArc(int32_t from, int32_t ilabel, float weight, int32_t to) {
    arcs_[size_t(from)].push_back({ilabel, 0, weight, to});
  }
  AlignGraph Build(int32_t start, int32_t final_state) {
    AlignGraph g;
    g.start = start;
    g.final_cost.assign(arcs_.size(), AlignGraph::kNotFinal);
    g.final_cost[size_t(final_state)] = 0.0f;
    for (const auto& list : arcs_) {
      g.arc_begin.push_back(int32_t(g.arcs.size()));
      g.arcs.insert(g.arcs.end(), list.begin(), list.end());
    }
    g.arc_begin.push_back(int32_t(g.arcs.size()));
    return g;
  }

 private:
  std::vector<std::vector<GraphArc>> arcs_;
};

}  // namespace

absl::StatusOr<AlignGraph> CompilePhoneGraph(const TransitionModel& model,
                                             std::span<const int32_t> phones,
                                             const PhoneGraphOptions& options) {
  std::vector<Pronunciations> words;
  words.reserve(phones.size());
  for (const int32_t phone : phones) words.push_back({{phone}});
  return CompileWordGraph(model, words, options);
}

absl::StatusOr<AlignGraph> CompileWordGraph(const TransitionModel& model,
                                            std::span<const Pronunciations> words,
                                            const PhoneGraphOptions& options) {
  if (words.empty()) return absl::InvalidArgumentError("the sequence is empty");
  for (size_t w = 0; w < words.size(); ++w) {
    if (words[w].empty())
      return absl::InvalidArgumentError(absl::StrCat("word ", w + 1, " has no pronunciation"));
    for (const std::vector<int32_t>& phones : words[w]) {
      if (phones.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("word ", w + 1, " has an empty pronunciation"));
      }
    }
  }
  if (options.optional_silence != 0 &&
      !(options.silence_prob > 0.0f && options.silence_prob < 1.0f)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the silence probability ", options.silence_prob, " is not in (0, 1)"));
  }
  // (phone, HMM state) -> transition-state; more than one: a context-dependent model.
  std::map<std::pair<int32_t, int32_t>, int32_t> tstate_of;
  for (int32_t ts = 1; ts <= model.NumTransitionStates(); ++ts) {
    const TransitionTuple& t = model.tuples()[size_t(ts - 1)];
    if (!tstate_of.emplace(std::pair{t.phone, t.hmm_state}, ts).second) {
      return absl::FailedPreconditionError(absl::StrCat(
          "phone ", t.phone, ", HMM state ", t.hmm_state,
          " has several pdfs: the model is context-dependent, and its graphs need Kaldi's "
          "decision tree (compile-train-graphs)"));
    }
  }
  const HmmTopology& topo = model.topology();
  GraphBuilder b;
  // The HMM of phone from state `from`: returns the state it ends in.
  auto add_phone = [&](int32_t phone, int32_t from) -> absl::StatusOr<int32_t> {
    if (phone <= 0 || size_t(phone) >= topo.phone_to_entry.size() ||
        topo.phone_to_entry[size_t(phone)] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("phone ", phone, " is not in the topology"));
    }
    const std::vector<HmmState>& entry = topo.TopologyForPhone(phone);
    std::vector<int32_t> state(entry.size());
    state[0] = from;
    for (size_t s = 1; s < entry.size(); ++s) state[s] = b.AddState();
    for (size_t s = 0; s < entry.size(); ++s) {
      if (entry[s].forward_pdf_class == kNoPdf) continue;  // the final, non-emitting state
      const auto it = tstate_of.find({phone, int32_t(s)});
      if (it == tstate_of.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("phone ", phone, ", HMM state ", s, " has no transition-state"));
      }
      const int32_t first_tid = model.FirstTransitionId(it->second);
      const int32_t self_loop = model.SelfLoopOf(it->second);
      for (size_t i = 0; i < entry[s].transitions.size(); ++i) {
        const int32_t tid = first_tid + int32_t(i);
        const int32_t to = state[size_t(entry[s].transitions[i].first)];
        if (tid == self_loop) {
          if (!options.reorder) b.AddArc(state[s], tid, 0.0f, state[s]);
          continue;
        }
        if (!options.reorder || self_loop == 0) {
          b.AddArc(state[s], tid, 0.0f, to);
          continue;
        }
        // Reordered: the forward transition first, then the state's self-loops, then on.
        const int32_t looping = b.AddState();
        b.AddArc(state[s], tid, 0.0f, looping);
        b.AddArc(looping, self_loop, 0.0f, looping);
        b.AddArc(looping, 0, 0.0f, to);
      }
    }
    return state.back();
  };
  const float with = -std::log(options.silence_prob);
  const float without = -std::log1p(-options.silence_prob);
  // At a boundary state: the silence, or not; returns where the next phone starts.
  auto optional_silence = [&](int32_t at) -> absl::StatusOr<int32_t> {
    if (options.optional_silence == 0) return at;
    const int32_t next = b.AddState(), sil = b.AddState();
    b.AddArc(at, 0, without, next);
    b.AddArc(at, 0, with, sil);
    absl::StatusOr<int32_t> end = add_phone(options.optional_silence, sil);
    if (!end.ok()) return end.status();
    b.AddArc(*end, 0, 0.0f, next);
    return next;
  };
  // A word's pronunciations in parallel from `from`; returns where they meet.
  auto add_word = [&](const Pronunciations& word, int32_t from) -> absl::StatusOr<int32_t> {
    const int32_t end = word.size() == 1 ? -1 : b.AddState();
    int32_t last = from;
    for (const std::vector<int32_t>& phones : word) {
      int32_t at = from;
      for (const int32_t phone : phones) {
        absl::StatusOr<int32_t> next = add_phone(phone, at);
        if (!next.ok()) return next.status();
        at = *next;
      }
      if (end < 0) {
        last = at;
      } else {
        b.AddArc(at, 0, 0.0f, end);
      }
    }
    return end < 0 ? last : end;
  };
  const int32_t start = b.AddState();
  int32_t at = start;
  for (const Pronunciations& word : words) {
    absl::StatusOr<int32_t> next = optional_silence(at);
    if (!next.ok()) return next.status();
    absl::StatusOr<int32_t> end = add_word(word, *next);
    if (!end.ok()) return end.status();
    at = *end;
  }
  absl::StatusOr<int32_t> last = optional_silence(at);
  if (!last.ok()) return last.status();
  return b.Build(start, *last);
}

}  // namespace gmmscore

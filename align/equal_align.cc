#include "align/equal_align.h"

#include "absl/strings/str_cat.h"
#include "util/kaldi_random.h"

namespace gmmscore {
namespace {

constexpr int kTries = 100;
// A draw that wanders this far without ending is abandoned (a graph whose final states are hard
// to reach), as too long.
constexpr int64_t kMaxSteps = 1 << 22;

// The first self-loop of state s with a transition-id, or -1.
int32_t EmittingSelfLoop(const AlignGraph& graph, int32_t s) {
  for (int32_t a = graph.arc_begin[s]; a < graph.arc_begin[s + 1]; ++a) {
    if (graph.arcs[a].next == s && graph.arcs[a].ilabel != 0) return a;
  }
  return -1;
}

}  // namespace

absl::StatusOr<std::vector<int32_t>> EqualAlign(const AlignGraph& graph, int32_t num_frames,
                                                uint32_t seed) {
  if (graph.start < 0 || graph.num_states() == 0) {
    return absl::InvalidArgumentError("the graph is empty");
  }
  if (num_frames < 1) return absl::InvalidArgumentError("the utterance has no frames");
  KaldiRandom random(seed);
  std::vector<int32_t> states, arcs;  // the path: its states, and the arc out of each but the last
  int64_t emitting = 0;
  std::vector<int64_t> lengths;
  for (int attempt = 0; attempt < kTries; ++attempt) {
    states.assign(1, graph.start);
    arcs.clear();
    emitting = 0;
    for (int64_t step = 0;; ++step) {
      const int32_t s = states.back();
      const int32_t num_arcs = graph.arc_begin[s + 1] - graph.arc_begin[s];
      const bool final = graph.final_cost[s] != AlignGraph::kNotFinal;
      const int32_t choices = num_arcs + (final ? 1 : 0);
      if (choices == 0 || step > kMaxSteps) {  // a dead end: start over
        emitting = int64_t(num_frames) + 1;
        break;
      }
      const int32_t pick = random.Int(0, choices - 1);
      if (pick == num_arcs) break;  // the end
      const GraphArc& arc = graph.arcs[graph.arc_begin[s] + pick];
      if (arc.next == s) continue;  // self-loops are added below
      arcs.push_back(graph.arc_begin[s] + pick);
      states.push_back(arc.next);
      if (arc.ilabel != 0) ++emitting;
    }
    lengths.push_back(emitting);
    if (emitting <= num_frames) break;
  }
  if (emitting > num_frames) {
    return absl::InvalidArgumentError(
        absl::StrCat("the utterance has too few frames (", num_frames, ") for the graph: ", kTries,
                     " random paths had more emitting arcs (the first ", lengths.front(), ")"));
  }
  std::vector<int32_t> loops(states.size());
  int64_t num_loops = 0;
  for (size_t i = 0; i < states.size(); ++i) {
    loops[i] = EmittingSelfLoop(graph, states[i]);
    if (loops[i] >= 0) ++num_loops;
  }
  const int64_t extra = num_frames - emitting;
  if (extra > 0 && num_loops == 0) {
    return absl::InvalidArgumentError(
        "no self-loops on the path drawn: it cannot be made as long as the utterance");
  }
  const int64_t each = num_loops == 0 ? 0 : extra / num_loops;
  const int64_t one_more = extra - each * num_loops;  // the first states with a loop take one more
  std::vector<int32_t> alignment;
  alignment.reserve(size_t(num_frames));
  int64_t loop_index = 0;
  for (size_t i = 0; i < states.size(); ++i) {
    if (loops[i] >= 0) {
      const int64_t n = each + (loop_index < one_more ? 1 : 0);
      ++loop_index;
      for (int64_t j = 0; j < n; ++j) alignment.push_back(graph.arcs[loops[i]].ilabel);
    }
    if (i + 1 < states.size() && graph.arcs[arcs[i]].ilabel != 0) {
      alignment.push_back(graph.arcs[arcs[i]].ilabel);
    }
  }
  return alignment;
}

}  // namespace gmmscore

#include "align/local_epsilon_removal.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace gmmscore {
namespace {

constexpr float kNoPath = AlignGraph::kNotFinal;

bool HasPath(float cost) { return cost != kNoPath; }
// The tropical semiring's sum: the better of two costs.
float Best(float a, float b) { return HasPath(a) ? (HasPath(b) ? std::min(a, b) : a) : b; }

class LocalEpsilonRemover {
 public:
  explicit LocalEpsilonRemover(VectorGraph& graph) : graph_(graph) {}

  void Run() {
    if (graph_.start < 0) return;
    const int32_t num_states = graph_.num_states();
    arcs_in_.assign(static_cast<size_t>(num_states), 0);
    ways_out_.assign(static_cast<size_t>(num_states), 0);
    ++arcs_in_[static_cast<size_t>(graph_.start)];
    for (int32_t s = 0; s < num_states; ++s) {
      if (HasPath(graph_.final_cost[s])) ++ways_out_[static_cast<size_t>(s)];
      for (const GraphArc& arc : graph_.arcs[s]) {
        ++arcs_in_[static_cast<size_t>(arc.next)];
        ++ways_out_[static_cast<size_t>(s)];
      }
    }
    for (int32_t s = 0; s < num_states; ++s) {
      for (size_t a = 0; a < graph_.arcs[s].size(); ++a) TryArc(s, a);
    }
    RemoveDeletedArcsAndDeadStates();
  }

 private:
  static constexpr int32_t kDeleted = -1;  // an arc's destination once it is removed

  static std::optional<GraphArc> Joined(const GraphArc& first, const GraphArc& second) {
    if ((first.ilabel != 0 && second.ilabel != 0) || (first.olabel != 0 && second.olabel != 0)) {
      return std::nullopt;
    }
    return GraphArc{first.ilabel != 0 ? first.ilabel : second.ilabel,
                    first.olabel != 0 ? first.olabel : second.olabel, first.weight + second.weight,
                    second.next};
  }

  int32_t& ArcsIn(int32_t s) { return arcs_in_[static_cast<size_t>(s)]; }
  int32_t& WaysOut(int32_t s) { return ways_out_[static_cast<size_t>(s)]; }

  void Delete(int32_t s, GraphArc& arc) {
    --WaysOut(s);
    --ArcsIn(arc.next);
    arc.next = kDeleted;
  }

  void AddArc(int32_t s, const GraphArc& arc) {
    ++WaysOut(s);
    ++ArcsIn(arc.next);
    graph_.arcs[s].push_back(arc);
  }

  void AddFinal(int32_t s, float cost) {
    if (!HasPath(graph_.final_cost[s])) ++WaysOut(s);
    graph_.final_cost[s] = Best(graph_.final_cost[s], cost);
  }

  void TryArc(int32_t s, size_t a) {
    const GraphArc arc = graph_.arcs[s][a];
    if (arc.next == kDeleted || arc.next == s) return;
    if (ArcsIn(arc.next) == 1 && WaysOut(arc.next) > 1) {
      MoveWaysOutBack(s, a);
    } else if (WaysOut(arc.next) == 1) {
      JoinWithOnlyWayOut(s, a);
    }
  }

  // The first pattern: arc a of s is the only arc into its destination, which has several ways out.
  void MoveWaysOutBack(int32_t s, size_t a) {
    const GraphArc arc = graph_.arcs[s][a];
    const int32_t next = arc.next;
    float removed = kNoPath, kept = kNoPath;
    std::vector<GraphArc> moved;
    for (GraphArc& out : graph_.arcs[next]) {
      if (out.next == kDeleted) continue;
      if (std::optional<GraphArc> joined = Joined(arc, out)) {
        removed = Best(removed, out.weight);
        moved.push_back(*joined);
        Delete(next, out);
      } else {
        kept = Best(kept, out.weight);
      }
    }
    if (const float final_cost = graph_.final_cost[next]; HasPath(final_cost)) {
      if (arc.ilabel == 0 && arc.olabel == 0) {
        removed = Best(removed, final_cost);
        AddFinal(s, arc.weight + final_cost);
        --WaysOut(next);
        graph_.final_cost[next] = kNoPath;
      } else {
        kept = Best(kept, final_cost);
      }
    }
    if (HasPath(removed)) {
      if (!HasPath(kept)) {
        Delete(s, graph_.arcs[s][a]);
      } else {
        // The arc takes the share of what stays (kept / (kept + removed)); what stays out of
        // its destination is divided by the same, so that every path keeps its cost.
        const float share = kept - Best(removed, kept);
        graph_.arcs[s][a].weight += share;
        for (GraphArc& out : graph_.arcs[next]) {
          if (out.next != kDeleted) out.weight -= share;
        }
        if (HasPath(graph_.final_cost[next])) graph_.final_cost[next] -= share;
      }
    }
    for (const GraphArc& joined : moved) AddArc(s, joined);
  }

  // The second pattern: arc a of s enters a state with one way out.
  void JoinWithOnlyWayOut(int32_t s, size_t a) {
    const GraphArc arc = graph_.arcs[s][a];
    const int32_t next = arc.next;
    const bool only_way_in = ArcsIn(next) == 1;
    bool joined = false;
    if (const float final_cost = graph_.final_cost[next]; HasPath(final_cost)) {
      if (arc.ilabel == 0 && arc.olabel == 0) {
        AddFinal(s, arc.weight + final_cost);
        joined = true;
        if (only_way_in) {
          --WaysOut(next);
          graph_.final_cost[next] = kNoPath;
        }
      }
    } else {
      auto out = std::find_if(graph_.arcs[next].begin(), graph_.arcs[next].end(),
                              [](const GraphArc& o) { return o.next != kDeleted; });
      if (std::optional<GraphArc> combined = Joined(arc, *out)) {
        joined = true;
        if (only_way_in) Delete(next, *out);
        AddArc(s, *combined);  // may move the arcs of s: a is an index
      }
    }
    if (joined) Delete(s, graph_.arcs[s][a]);
  }

  // OpenFst's Connect after the removal: deleted arcs go, and states not on a path from the start
  // to a final state, the others renumbered in order.
  void RemoveDeletedArcsAndDeadStates() {
    const int32_t n = graph_.num_states();
    for (auto& arcs : graph_.arcs) {
      std::erase_if(arcs, [](const GraphArc& arc) { return arc.next == kDeleted; });
    }
    std::vector<bool> reached(static_cast<size_t>(n), false), useful(static_cast<size_t>(n), false);
    std::vector<int32_t> stack = {graph_.start};
    reached[static_cast<size_t>(graph_.start)] = true;
    std::vector<std::vector<int32_t>> into(static_cast<size_t>(n));
    while (!stack.empty()) {
      const int32_t s = stack.back();
      stack.pop_back();
      for (const GraphArc& arc : graph_.arcs[s]) {
        into[static_cast<size_t>(arc.next)].push_back(s);
        if (!reached[static_cast<size_t>(arc.next)]) {
          reached[static_cast<size_t>(arc.next)] = true;
          stack.push_back(arc.next);
        }
      }
    }
    for (int32_t s = 0; s < n; ++s) {
      if (reached[static_cast<size_t>(s)] && HasPath(graph_.final_cost[s])) {
        useful[static_cast<size_t>(s)] = true;
        stack.push_back(s);
      }
    }
    while (!stack.empty()) {
      const int32_t s = stack.back();
      stack.pop_back();
      for (const int32_t from : into[static_cast<size_t>(s)]) {
        if (!useful[static_cast<size_t>(from)]) {
          useful[static_cast<size_t>(from)] = true;
          stack.push_back(from);
        }
      }
    }
    std::vector<int32_t> number(static_cast<size_t>(n), -1);
    VectorGraph out;
    for (int32_t s = 0; s < n; ++s) {
      if (useful[static_cast<size_t>(s)]) number[static_cast<size_t>(s)] = out.AddState();
    }
    for (int32_t s = 0; s < n; ++s) {
      const int32_t to = number[static_cast<size_t>(s)];
      if (to < 0) continue;
      out.final_cost[to] = graph_.final_cost[s];
      for (GraphArc arc : graph_.arcs[s]) {
        if (number[static_cast<size_t>(arc.next)] < 0) continue;
        arc.next = number[static_cast<size_t>(arc.next)];
        out.arcs[to].push_back(arc);
      }
    }
    out.start = number[static_cast<size_t>(graph_.start)];
    graph_ = std::move(out);
  }

  VectorGraph& graph_;
  std::vector<int32_t> arcs_in_;   // arcs into each state, and one for the start
  std::vector<int32_t> ways_out_;  // arcs out of each state, and one for being final
};

}  // namespace

void RemoveEpsilonsLocally(VectorGraph& graph) { LocalEpsilonRemover(graph).Run(); }

}  // namespace gmmscore

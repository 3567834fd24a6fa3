// Local epsilon removal (Kaldi's RemoveEpsLocal, compile-train-graphs --rm-eps): on hand-made
// graphs, each of its two patterns does what Kaldi's does; on random acyclic graphs full of
// epsilons, every (input, output) label sequence keeps its best cost, and no arc or state is
// added.
#include "align/local_epsilon_removal.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <utility>
#include <vector>

namespace gmmscore::testing {
namespace {

using LabelSequences = std::pair<std::vector<int32_t>, std::vector<int32_t>>;

// Every path's (input labels, output labels) without epsilons, and the best cost of each.
void AddPaths(const VectorGraph& g, int32_t s, LabelSequences& labels, float cost,
              std::map<LabelSequences, float>& best) {
  if (g.final_cost[s] != AlignGraph::kNotFinal) {
    const float total = cost + g.final_cost[s];
    auto [it, inserted] = best.emplace(labels, total);
    if (!inserted) it->second = std::min(it->second, total);
  }
  for (const GraphArc& arc : g.arcs[s]) {
    if (arc.ilabel != 0) labels.first.push_back(arc.ilabel);
    if (arc.olabel != 0) labels.second.push_back(arc.olabel);
    AddPaths(g, arc.next, labels, cost + arc.weight, best);
    if (arc.ilabel != 0) labels.first.pop_back();
    if (arc.olabel != 0) labels.second.pop_back();
  }
}

std::map<LabelSequences, float> BestCosts(const VectorGraph& g) {
  std::map<LabelSequences, float> best;
  LabelSequences labels;
  if (g.start >= 0) AddPaths(g, g.start, labels, 0.0f, best);
  return best;
}

int64_t NumArcs(const VectorGraph& g) {
  int64_t n = 0;
  for (const auto& arcs : g.arcs) n += static_cast<int64_t>(arcs.size());
  return n;
}

TEST(LocalEpsilonRemovalTest, JoinsAnArcWithTheOnlyWayOutOfItsState) {
  // 0 -a:x/1-> 1 -<eps>/2-> 2 (final 0.5): the epsilon goes, the arc ends at 2.
  VectorGraph g;
  for (int i = 0; i < 3; ++i) g.AddState();
  g.start = 0;
  g.arcs[0].push_back({5, 7, 1.0f, 1});
  g.arcs[1].push_back({0, 0, 2.0f, 2});
  g.final_cost[2] = 0.5f;
  RemoveEpsilonsLocally(g);
  ASSERT_EQ(g.num_states(), 2);
  ASSERT_EQ(g.arcs[0].size(), 1u);
  EXPECT_EQ(g.arcs[0][0].ilabel, 5);
  EXPECT_EQ(g.arcs[0][0].olabel, 7);
  EXPECT_FLOAT_EQ(g.arcs[0][0].weight, 3.0f);
  EXPECT_FLOAT_EQ(g.final_cost[g.arcs[0][0].next], 0.5f);
}

TEST(LocalEpsilonRemovalTest, MovesJoinableWaysOutBackAndReweightsWhatStays) {
  // 0 -<eps>/1-> 1, the only arc into 1; out of 1: 3:<eps>/2 and 4:<eps>/4 to 2, and final 3.
  // The epsilon arc joins both arcs and the final cost; all of 1's ways out move, so the epsilon
  // arc goes.
  VectorGraph g;
  for (int i = 0; i < 3; ++i) g.AddState();
  g.start = 0;
  g.arcs[0].push_back({0, 0, 1.0f, 1});
  g.arcs[1].push_back({3, 0, 2.0f, 2});
  g.arcs[1].push_back({4, 0, 4.0f, 2});
  g.final_cost[1] = 3.0f;
  g.final_cost[2] = 0.0f;
  const auto before = BestCosts(g);
  RemoveEpsilonsLocally(g);
  EXPECT_EQ(g.num_states(), 2);
  EXPECT_EQ(NumArcs(g), 2);
  EXPECT_FLOAT_EQ(g.final_cost[0], 4.0f);
  EXPECT_EQ(BestCosts(g), before);

  // Where one way out cannot be joined (the arc's output label meets another), the arc keeps
  // that share: its cost rises by (kept - best of all), and the way out that stays falls by it.
  VectorGraph h;
  for (int i = 0; i < 3; ++i) h.AddState();
  h.start = 0;
  h.arcs[0].push_back({0, 9, 1.0f, 1});
  h.arcs[1].push_back({3, 0, 2.0f, 2});  // joinable
  h.arcs[1].push_back({4, 8, 5.0f, 2});  // two output labels: stays
  h.final_cost[2] = 0.0f;
  const auto h_before = BestCosts(h);
  RemoveEpsilonsLocally(h);
  ASSERT_EQ(h.arcs[h.start].size(), 2u);
  EXPECT_FLOAT_EQ(h.arcs[h.start][0].weight, 1.0f + (5.0f - 2.0f));
  EXPECT_EQ(h.arcs[h.start][1].ilabel, 3);
  EXPECT_EQ(h.arcs[h.start][1].olabel, 9);
  EXPECT_FLOAT_EQ(h.arcs[h.start][1].weight, 3.0f);
  EXPECT_EQ(BestCosts(h), h_before);
}

TEST(LocalEpsilonRemovalTest, RandomGraphsKeepEveryBestCostAndNeverGrow) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int32_t> label(0, 2);
  std::uniform_real_distribution<float> cost(0.0f, 4.0f);
  int64_t removed = 0;
  for (int trial = 0; trial < 300; ++trial) {
    VectorGraph g;
    const int32_t n = 2 + trial % 7;
    for (int32_t s = 0; s < n; ++s) g.AddState();
    g.start = 0;
    g.final_cost[n - 1] = cost(rng);
    for (int32_t s = 0; s + 1 < n; ++s) {
      if (rng() % 4 == 0) g.final_cost[s] = cost(rng);
      const int32_t arcs = 1 + static_cast<int32_t>(rng() % 3);
      for (int32_t a = 0; a < arcs; ++a) {
        const int32_t to = s + 1 + static_cast<int32_t>(rng() % static_cast<uint32_t>(n - s - 1));
        g.arcs[s].push_back({label(rng), label(rng), cost(rng), to});
      }
    }
    const auto before = BestCosts(g);
    const int64_t arcs_before = NumArcs(g);
    RemoveEpsilonsLocally(g);
    EXPECT_LE(g.num_states(), n) << "trial " << trial;
    EXPECT_LE(NumArcs(g), arcs_before) << "trial " << trial;
    removed += arcs_before - NumArcs(g);
    const auto after = BestCosts(g);
    ASSERT_EQ(after.size(), before.size()) << "trial " << trial;
    for (const auto& [labels, best] : before) {
      auto it = after.find(labels);
      ASSERT_NE(it, after.end()) << "trial " << trial;
      EXPECT_NEAR(it->second, best, 1e-4f) << "trial " << trial;
    }
  }
  EXPECT_GT(removed, 100);  // the removal did remove
}

TEST(LocalEpsilonRemovalTest, EmptyAndDeadGraphs) {
  VectorGraph empty;
  RemoveEpsilonsLocally(empty);
  EXPECT_EQ(empty.start, -1);
  VectorGraph dead;  // no final state: nothing is left
  dead.start = dead.AddState();
  const int32_t end = dead.AddState();
  dead.arcs[0].push_back({0, 0, 1.0f, end});
  RemoveEpsilonsLocally(dead);
  EXPECT_EQ(dead.start, -1);
  EXPECT_EQ(dead.num_states(), 0);
}

}  // namespace
}  // namespace gmmscore::testing

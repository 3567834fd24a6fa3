// The aligner (align/) on its own: Viterbi against brute-force enumeration of every path of small
// random graphs, the beam and the retry beam, careful graphs, Kaldi's transition costs, and the
// per-utterance errors. Transition-ids and pdfs are those of the real Kaldi monophone model in
// tests/data/kaldi-mono.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>

#include "align/align_utterance.h"
#include "align/careful_graph.h"
#include "align/equal_align.h"
#include "align/faster_viterbi.h"
#include "align/forward_backward.h"
#include "align/phone_graph.h"
#include "align/transition_probs.h"
#include "tests/align_test_util.h"

namespace gmmscore {
namespace {

// Every complete path's probability, summed: the total, and per frame and transition-id.
struct AllPaths {
  std::vector<double> path_logprobs;
  std::vector<std::vector<int32_t>> path_tids;
};

AllPaths EnumerateAll(const AlignGraph& g, const TransitionModel& tm, const Matrix& ll,
                      float acoustic_scale) {
  AllPaths all;
  std::vector<int32_t> tids;
  std::function<void(int32_t, int32_t, double)> walk = [&](int32_t s, int32_t frame, double lp) {
    if (frame == ll.rows && g.final_cost[size_t(s)] != AlignGraph::kNotFinal) {
      all.path_logprobs.push_back(lp - g.final_cost[size_t(s)]);
      all.path_tids.push_back(tids);
    }
    for (int32_t a = g.arc_begin[size_t(s)]; a < g.arc_begin[size_t(s) + 1]; ++a) {
      const GraphArc& arc = g.arcs[size_t(a)];
      if (arc.ilabel == 0) {
        walk(arc.next, frame, lp - arc.weight);
      } else if (frame < ll.rows) {
        tids.push_back(arc.ilabel);
        walk(arc.next, frame + 1,
             lp - arc.weight +
                 double(acoustic_scale) * ll.at(frame, tm.TransitionIdToPdf(arc.ilabel)));
        tids.pop_back();
      }
    }
  };
  walk(g.start, 0, 0.0);
  return all;
}

struct BestByEnumeration {
  double cost = std::numeric_limits<double>::infinity();
  std::vector<int32_t> tids;
  int32_t ties = 0;  // other complete paths within 1e-9 of the best
};

// The best of every path (EnumerateAll), as a cost.
BestByEnumeration Enumerate(const AlignGraph& g, const TransitionModel& tm, const Matrix& ll,
                            float acoustic_scale) {
  const AllPaths all = EnumerateAll(g, tm, ll, acoustic_scale);
  BestByEnumeration best;
  for (size_t p = 0; p < all.path_logprobs.size(); ++p) {
    const double cost = -all.path_logprobs[p];
    if (cost < best.cost - 1e-9) {
      best = {cost, all.path_tids[p], 0};
    } else if (std::abs(cost - best.cost) <= 1e-9) {
      ++best.ties;
    }
  }
  return best;
}

TEST(FasterViterbiTest, WithAWideBeamFindsTheBestOfAllPaths) {
  const TransitionModel& tm = KaldiMono();
  std::mt19937 rng(7);
  int32_t compared = 0, no_path = 0;
  for (int32_t trial = 0; trial < 200; ++trial) {
    AlignGraph g = RandomGraph(rng, 2 + trial % 6, tm.NumTransitionIds());
    ASSERT_TRUE(AddTransitionProbs(tm, 1.0f, 0.1f, &g).ok());
    const Matrix ll = RandomLoglikes(rng, 1 + trial % 5, tm.NumPdfs());
    const BestByEnumeration want = Enumerate(g, tm, ll, 0.1f);
    FasterViterbi decoder(g, tm, {.beam = 1e6f});
    decoder.Decode(ll, 0.1f);
    if (want.cost == std::numeric_limits<double>::infinity()) {
      EXPECT_FALSE(decoder.ReachedFinal()) << "trial " << trial;
      ++no_path;
      continue;
    }
    ASSERT_TRUE(decoder.ReachedFinal()) << "trial " << trial;
    const std::optional<ViterbiPath> path = decoder.BestPath();
    ASSERT_TRUE(path.has_value());
    EXPECT_NEAR(double(path->graph_cost) + double(path->acoustic_cost), want.cost, 1e-4)
        << "trial " << trial;
    if (want.ties == 0) {
      EXPECT_EQ(path->transition_ids, want.tids) << "trial " << trial;
    }
    EXPECT_EQ(path->frame_acoustic_costs.size(), size_t(ll.rows));
    ++compared;
  }
  EXPECT_GT(compared, 100);
  EXPECT_GT(no_path, 0) << "some random graphs should have no path of the right length";
}

TEST(ForwardBackwardTest, TotalAndPosteriorsAreThoseOfAllPaths) {
  const TransitionModel& tm = KaldiMono();
  std::mt19937 rng(17);
  int32_t compared = 0;
  for (int32_t trial = 0; trial < 150; ++trial) {
    AlignGraph g = RandomGraph(rng, 2 + trial % 6, tm.NumTransitionIds());
    ASSERT_TRUE(AddTransitionProbs(tm, 1.0f, 0.1f, &g).ok());
    const Matrix ll = RandomLoglikes(rng, 1 + trial % 5, tm.NumPdfs());
    const AllPaths all = EnumerateAll(g, tm, ll, 0.1f);
    const auto fb = ForwardBackward(g, tm, ll, 0.1f);
    if (all.path_logprobs.empty()) {
      EXPECT_EQ(fb.status().code(), absl::StatusCode::kNotFound) << trial;
      continue;
    }
    ASSERT_TRUE(fb.ok()) << trial << ": " << fb.status();
    const double best = *std::max_element(all.path_logprobs.begin(), all.path_logprobs.end());
    double sum = 0.0;
    for (double lp : all.path_logprobs) sum += std::exp(lp - best);
    const double total = best + std::log(sum);
    EXPECT_NEAR(fb->total_log_likelihood, total, 1e-6 * std::max(1.0, std::abs(total))) << trial;
    ASSERT_EQ(fb->posteriors.size(), size_t(ll.rows));
    for (int32_t t = 0; t < ll.rows; ++t) {
      std::map<int32_t, double> want;
      for (size_t p = 0; p < all.path_logprobs.size(); ++p) {
        want[all.path_tids[p][size_t(t)]] += std::exp(all.path_logprobs[p] - total);
      }
      double frame_sum = 0.0;
      for (const auto& [tid, weight] : fb->posteriors[size_t(t)]) {
        EXPECT_NEAR(weight, want[tid], 1e-5) << "trial " << trial << ", frame " << t;
        frame_sum += weight;
      }
      EXPECT_NEAR(frame_sum, 1.0, 1e-5) << "trial " << trial << ", frame " << t;
      for (const auto& [want_tid, weight] : want) {
        if (weight > 1e-5) {
          const auto tid = want_tid;  // clang 14 cannot capture a structured binding
          EXPECT_TRUE(std::any_of(fb->posteriors[size_t(t)].begin(),
                                  fb->posteriors[size_t(t)].end(),
                                  [&](const auto& p) { return p.first == tid; }))
              << trial;
        }
      }
    }
    ++compared;
  }
  EXPECT_GT(compared, 60);
}

// 25 cheap decoy states that are not final and one expensive real path: with more than
// min-active tokens a narrow beam prunes the real path, the retry beam finds it.
AlignGraph DecoyGraph(int32_t cheap_tid, int32_t dear_tid) {
  GraphBuilder b;
  b.AddState();
  for (int32_t k = 0; k < 25; ++k) {
    const int32_t s = b.AddState();
    b.AddArc(0, 0, 0.0f, s);
    b.AddArc(s, cheap_tid, 0.0f, s);
  }
  const int32_t real = b.AddState(0.0f);
  b.AddArc(0, 0, 0.0f, real);
  b.AddArc(real, dear_tid, 0.0f, real, 42);
  return b.Build();
}

TEST(AlignUtteranceTest, RetriesWithTheRetryBeamWhenTheBeamLosesEveryFinalState) {
  const TransitionModel& tm = KaldiMono();
  const int32_t cheap = 2, dear = 17;  // different pdfs
  ASSERT_NE(tm.TransitionIdToPdf(cheap), tm.TransitionIdToPdf(dear));
  Matrix ll(30, tm.NumPdfs());
  for (int32_t t = 0; t < 30; ++t) {
    for (int32_t p = 0; p < tm.NumPdfs(); ++p) ll.at(t, p) = -10.0f;
    ll.at(t, tm.TransitionIdToPdf(dear)) = -40.0f;
  }
  AlignOptions narrow;
  narrow.beam = 1.0f;
  UtteranceAlignment failed = AlignUtterance(narrow, tm, DecoyGraph(cheap, dear), ll);
  EXPECT_EQ(failed.status.code(), absl::StatusCode::kNotFound) << failed.status;
  EXPECT_FALSE(failed.retried);
  AlignOptions retry = narrow;
  retry.retry_beam = 1000.0f;
  UtteranceAlignment aligned = AlignUtterance(retry, tm, DecoyGraph(cheap, dear), ll);
  ASSERT_TRUE(aligned.status.ok()) << aligned.status;
  EXPECT_TRUE(aligned.retried);
  EXPECT_EQ(aligned.transition_ids, std::vector<int32_t>(30, dear));
  EXPECT_EQ(aligned.words, std::vector<int32_t>(30, 42));
  const float self_loop = -ScaledTransitionLogProb(tm, dear, 1.0f, 1.0f);
  EXPECT_NEAR(aligned.score, -(30 * (40.0f + self_loop)), 1e-3);
  EXPECT_NEAR(aligned.frame_loglikes.front(), -40.0f, 1e-5);
}

TEST(AlignUtteranceTest, RefusesBeamsThatDoNotMakeSense) {
  AlignOptions o;
  o.beam = 6;
  o.retry_beam = 6;
  EXPECT_NE(ValidateAlignOptions(o).message().find("beams do not make sense"), std::string::npos);
  o.retry_beam = 40;
  EXPECT_TRUE(ValidateAlignOptions(o).ok());
  o.beam = 0;
  EXPECT_FALSE(ValidateAlignOptions(o).ok());
}

TEST(AlignUtteranceTest, NamesWhatIsWrongWithAnUtterance) {
  const TransitionModel& tm = KaldiMono();
  const Matrix ll(3, tm.NumPdfs());
  GraphBuilder one;
  one.AddState(0.0f);
  one.AddArc(0, 5, 0.0f, 0);
  EXPECT_NE(AlignUtterance({}, tm, one.Build(), Matrix(0, tm.NumPdfs()))
                .status.message()
                .find("zero-length"),
            std::string::npos);
  EXPECT_NE(AlignUtterance({}, tm, GraphBuilder().Build(), ll).status.message().find("empty"),
            std::string::npos);
  GraphBuilder beyond;
  beyond.AddState(0.0f);
  beyond.AddArc(0, tm.NumTransitionIds() + 1, 0.0f, 0);
  const absl::Status bad_label = AlignUtterance({}, tm, beyond.Build(), ll).status;
  EXPECT_NE(bad_label.message().find("not a transition-id"), std::string::npos) << bad_label;
  GraphBuilder nan_weight;
  nan_weight.AddState(0.0f);
  nan_weight.AddArc(0, 5, std::nanf(""), 0);
  EXPECT_NE(AlignUtterance({}, tm, nan_weight.Build(), ll).status.message().find("NaN"),
            std::string::npos);
  GraphBuilder no_final;
  no_final.AddState();
  no_final.AddArc(0, 5, 0.0f, 0);
  EXPECT_EQ(AlignUtterance({}, tm, no_final.Build(), ll).status.code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(AlignUtterance({}, tm, one.Build(), Matrix(3, 5)).status.code(),
            absl::StatusCode::kInvalidArgument)
      << "scores for the wrong number of pdfs";
}

TEST(CarefulGraphTest, IsTheGraphConcatenatedWithItsCopyAsOpenFstsConcatMakesIt) {
  GraphBuilder b;
  b.AddState();
  b.AddState(1.5f);
  b.AddArc(0, 3, 0.25f, 1);
  b.AddArc(1, 4, 0.5f, 1);
  const AlignGraph careful = MakeCarefulGraph(b.Build());
  ASSERT_EQ(careful.num_states(), 5);
  EXPECT_EQ(careful.start, 0);
  // The old final state: its arc, then an epsilon arc with its final weight to the new start 4.
  ASSERT_EQ(careful.arc_begin[2] - careful.arc_begin[1], 2);
  const GraphArc& to_copy = careful.arcs[size_t(careful.arc_begin[1]) + 1];
  EXPECT_EQ(to_copy.ilabel, 0);
  EXPECT_EQ(to_copy.weight, 1.5f);
  EXPECT_EQ(to_copy.next, 4);
  EXPECT_EQ(careful.final_cost[1], AlignGraph::kNotFinal);
  EXPECT_EQ(careful.final_cost[3], AlignGraph::kNotFinal) << "the copy has no final weights";
  EXPECT_EQ(careful.final_cost[4], 0.0f);
  EXPECT_EQ(careful.arcs[size_t(careful.arc_begin[4])].next, 2) << "to the copy of the start";
  EXPECT_TRUE(ValidateAlignGraph(careful, 10).ok());
}

TEST(TransitionProbsTest, ScalesSelfLoopsAndForwardTransitionsAsKaldiDoes) {
  const TransitionModel& tm = KaldiMono();
  for (int32_t tid = 1; tid <= tm.NumTransitionIds(); ++tid) {
    const float log_prob = tm.TransitionIdToLogProb(tid);
    EXPECT_EQ(ScaledTransitionLogProb(tm, tid, 1.0f, 1.0f), log_prob);
    const float scaled = ScaledTransitionLogProb(tm, tid, 1.0f, 0.1f);
    if (tm.IsSelfLoop(tid)) {
      EXPECT_FLOAT_EQ(scaled, 0.1f * log_prob);
    } else {
      const int32_t ts = tm.TransitionIdToTransitionState(tid);
      const double leave =
          tm.SelfLoopOf(ts) == 0
              ? 0.0
              : std::log(1.0 - std::exp(double(tm.TransitionIdToLogProb(tm.SelfLoopOf(ts)))));
      EXPECT_NEAR(scaled, 0.1 * leave + (log_prob - leave), 1e-5) << tid;
    }
  }
}

// TransitionModel::Create checks the counts it is given, whatever reader made them: a pdf-id whose
// successor overflows int32 is refused, naming the transition-state.
TEST(TransitionModelTest, CreateRefusesPdfIdsAtTheEndOfInt32) {
  const TransitionModel& tm = KaldiMono();
  std::vector<TransitionTuple> tuples = tm.tuples();
  tuples[3].forward_pdf = std::numeric_limits<int32_t>::max();
  const auto made = TransitionModel::Create(tm.topology(), tuples, tm.log_probs());
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(made.status().message().find("transition-state 4: pdf-ids 2147483647"),
            std::string::npos)
      << made.status();
  EXPECT_TRUE(TransitionModel::Create(tm.topology(), tm.tuples(), tm.log_probs()).ok());
}

// A left-to-right chain: state i has a self-loop with transition-id 2i + 1 and a forward arc with
// 2i + 2; an epsilon arc skips state 1 (an optional phone); the last state is final.
AlignGraph Chain() {
  GraphBuilder b;
  for (int i = 0; i < 3; ++i) b.AddState();
  const int32_t last = b.AddState(0.0f);
  for (int32_t i = 0; i < 3; ++i) {
    b.AddArc(i, 2 * i + 1, 0.0f, i);
    b.AddArc(i, 2 * i + 2, 0.0f, i + 1);
  }
  b.AddArc(0, 0, 0.0f, 2);
  (void)last;
  return b.Build();
}

TEST(EqualAlignTest, SpreadsTheFramesOverThePathsSelfLoops) {
  const AlignGraph graph = Chain();
  for (uint32_t seed = 0; seed < 20; ++seed) {
    auto ali = EqualAlign(graph, 11, seed);
    ASSERT_TRUE(ali.ok()) << ali.status();
    ASSERT_EQ(ali->size(), 11u);
    // A state's self-loops come before its forward arc, the extra frames spread evenly: on the
    // path 0 -> 1 -> 2 -> 3, 3 emitting arcs and 8 frames over 3 loops (3, 3, 2); on the path
    // 0 -> 2 -> 3 through the epsilon arc, 1 emitting arc and 10 frames over 2 loops (5, 5).
    std::vector<int32_t> expected;
    if ((*ali)[0] == 1 && std::count(ali->begin(), ali->end(), 3) > 0) {
      expected = {1, 1, 1, 2, 3, 3, 3, 4, 5, 5, 6};
    } else {
      expected = {1, 1, 1, 1, 1, 5, 5, 5, 5, 5, 6};
    }
    EXPECT_EQ(*ali, expected) << "seed " << seed;
    EXPECT_EQ(*EqualAlign(graph, 11, seed), *ali);  // the same draw for the same seed
  }
  // One frame: only the path through the epsilon arc is short enough (the draw is retried).
  auto one = EqualAlign(graph, 1, 3);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(*one, std::vector<int32_t>{6});
}

TEST(EqualAlignTest, SaysWhyItCannot) {
  EXPECT_FALSE(EqualAlign(AlignGraph(), 5, 0).ok());
  EXPECT_FALSE(EqualAlign(Chain(), 0, 0).ok());
  // Without self-loops a path cannot be lengthened.
  GraphBuilder b;
  b.AddState();
  b.AddState(0.0f);
  b.AddArc(0, 1, 0.0f, 1);
  const absl::Status s = EqualAlign(b.Build(), 4, 0).status();
  EXPECT_NE(s.message().find("no self-loops"), std::string::npos) << s;
  // Every path longer than the utterance.
  GraphBuilder c;
  for (int i = 0; i < 4; ++i) c.AddState(i == 3 ? 0.0f : AlignGraph::kNotFinal);
  for (int32_t i = 0; i < 3; ++i) c.AddArc(i, i + 1, 0.0f, i + 1);
  const absl::Status t = EqualAlign(c.Build(), 2, 0).status();
  EXPECT_NE(t.message().find("too few frames"), std::string::npos) << t;
}

TEST(PhoneGraphTest, ReorderedSelfLoopsScoreAsKaldisOtherOrder) {
  const TransitionModel& model = KaldiMono();
  std::mt19937 rng(4);
  const std::vector<int32_t> phones = {5, 6, 14, 3};
  PhoneGraphOptions reordered{.optional_silence = 1, .silence_prob = 0.3f, .reorder = true};
  PhoneGraphOptions plain = reordered;
  plain.reorder = false;
  auto a = CompilePhoneGraph(model, phones, reordered);
  auto b = CompilePhoneGraph(model, phones, plain);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  AlignOptions options;
  options.beam = 1000.0f;
  for (int trial = 0; trial < 5; ++trial) {
    const Matrix loglikes = RandomLoglikes(rng, 40, model.NumPdfs());
    const UtteranceAlignment x = AlignUtterance(options, model, *a, loglikes);
    const UtteranceAlignment y = AlignUtterance(options, model, *b, loglikes);
    ASSERT_TRUE(x.status.ok() && y.status.ok()) << x.status << y.status;
    EXPECT_NEAR(x.score, y.score, 1e-3f * std::abs(y.score));
    // The same states visited: the same pdf every frame; only the labels' order differs.
    for (size_t t = 0; t < x.transition_ids.size(); ++t) {
      EXPECT_EQ(model.TransitionIdToPdf(x.transition_ids[t]),
                model.TransitionIdToPdf(y.transition_ids[t]));
    }
  }
  EXPECT_FALSE(CompilePhoneGraph(model, {}, plain).ok());
  EXPECT_FALSE(CompilePhoneGraph(model, std::vector<int32_t>{99}, plain).ok());
  plain.silence_prob = 1.0f;
  EXPECT_FALSE(CompilePhoneGraph(model, phones, plain).ok());
}

}  // namespace
}  // namespace gmmscore

// Graphs and scores for the alignment tests: a builder, random graphs, random log-likelihoods, and
// the transition model of the real Kaldi monophone model in tests/data/kaldi-mono.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "formats/model_io.h"
#include "model/align_graph.h"
#include "model/transition_model.h"
#include "tests/test_util.h"
#include "util/matrix.h"

namespace gmmscore {

inline const TransitionModel& KaldiMono() {
  static const GmmModel* model = [] {
    auto loaded = LoadModel(testing::DataPath("kaldi-mono/final.mdl"));
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    return new GmmModel(std::move(loaded->model));
  }();
  return model->hmm();
}

// Builds a graph from (source, arc) lists.
struct GraphBuilder {
  std::vector<std::vector<GraphArc>> arcs;
  std::vector<float> finals;
  int32_t AddState(float final_cost = AlignGraph::kNotFinal) {
    arcs.emplace_back();
    finals.push_back(final_cost);
    return int32_t(arcs.size()) - 1;
  }
  void AddArc(int32_t from, int32_t ilabel, float weight, int32_t to, int32_t olabel = 0) {
    arcs[size_t(from)].push_back({ilabel, olabel, weight, to});
  }
  AlignGraph Build(int32_t start = 0) const {
    AlignGraph g;
    g.start = arcs.empty() ? -1 : start;
    g.final_cost = finals;
    for (const auto& list : arcs) {
      g.arc_begin.push_back(int32_t(g.arcs.size()));
      g.arcs.insert(g.arcs.end(), list.begin(), list.end());
    }
    g.arc_begin.push_back(int32_t(g.arcs.size()));
    return g;
  }
};

// Random graphs: emitting arcs anywhere, epsilon arcs only to higher states (no epsilon cycles).
inline AlignGraph RandomGraph(std::mt19937& rng, int32_t states, int32_t num_tids) {
  std::uniform_int_distribution<int32_t> state(0, states - 1), tid(1, num_tids), fanout(1, 3);
  std::uniform_real_distribution<float> weight(0.0f, 2.0f), coin(0.0f, 1.0f);
  GraphBuilder b;
  for (int32_t s = 0; s < states; ++s)
    b.AddState(coin(rng) < 0.3f ? weight(rng) : AlignGraph::kNotFinal);
  b.finals[size_t(states - 1)] = 0.5f;
  for (int32_t s = 0; s < states; ++s) {
    for (int32_t k = fanout(rng); k > 0; --k) {
      if (coin(rng) < 0.2f && s + 1 < states) {
        b.AddArc(s, 0, weight(rng), std::uniform_int_distribution<int32_t>(s + 1, states - 1)(rng));
      } else {
        b.AddArc(s, tid(rng), weight(rng), state(rng), int32_t(coin(rng) < 0.2f ? 7 : 0));
      }
    }
  }
  return b.Build();
}

inline Matrix RandomLoglikes(std::mt19937& rng, int32_t frames, int32_t pdfs) {
  std::uniform_real_distribution<float> value(-30.0f, -5.0f);
  Matrix m(frames, pdfs);
  for (float& x : m.data) x = value(rng);
  return m;
}

}  // namespace gmmscore

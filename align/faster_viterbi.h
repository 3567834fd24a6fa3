// Viterbi token passing over an AlignGraph with the semantics of Kaldi's FasterDecoder as
// gmm-align-compiled uses it (max-active unlimited, min-active 20), so that alignments match
// Kaldi's:
//   - a token per graph state, its cost (graph + scaled acoustic, in double) and a back-pointer;
//   - each frame, the tokens below the cutoff pass through the emitting arcs (input label a
//     transition-id), then epsilon arcs are followed to a fixed point;
//   - the cutoff is the best cost + beam, or, while fewer than min-active tokens would survive,
//     the cost of the (min-active + 1)-th best token, with the next frame's cutoff bounded as it
//     goes (the adaptive beam);
//   - a token replaces another at the same state only when strictly better: on exact cost ties
//     the first one found stays. Kaldi visits tokens in its hash list's order, this decoder in
//     the order states became active, so the two can differ only on exact ties.
// Acoustic costs are -(acoustic_scale x log-likelihood) of the arc's pdf, read from a matrix of
// frames x pdfs computed once per utterance.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/align_graph.h"
#include "model/transition_model.h"
#include "util/matrix.h"

namespace gmmscore {

struct FasterViterbiOptions {
  float beam = 16.0f;
  int32_t min_active = 20;
  float beam_delta = 0.5f;
};

// The best path through the graph, as Kaldi's GetBestPath and GetLinearSymbolSequence give it.
struct ViterbiPath {
  std::vector<int32_t> transition_ids;  // the non-zero input labels, in order: one per frame
  std::vector<int32_t> words;           // the non-zero output labels, in order
  float graph_cost = 0.0f;              // summed in float along the path, the final weight last
  float acoustic_cost = 0.0f;           // scaled, summed in float along the path
  // Per frame, the scaled acoustic cost of its arc (epsilon arcs' share added to the frame
  // before them), as Kaldi's GetPerFrameAcousticCosts.
  std::vector<float> frame_acoustic_costs;
};

class FasterViterbi {
 public:
  // graph and model must outlive the decoder; every input label of graph is 0 or a transition-id
  // of model (ValidateAlignGraph).
  FasterViterbi(const AlignGraph& graph, const TransitionModel& model,
                const FasterViterbiOptions& options);

  void set_beam(float beam) { options_.beam = beam; }
  // Decodes loglikes (frames x pdfs, natural-log likelihoods) from the start state.
  void Decode(const Matrix& loglikes, float acoustic_scale);
  // Whether a token survived in a final state after the last frame.
  bool ReachedFinal() const;
  // The best path into a final state (with its final weight) where one was reached, else the best
  // token's path; nullopt where no token survived.
  std::optional<ViterbiPath> BestPath() const;

 private:
  struct Token {
    double cost = 0.0;
    int32_t prev = -1;  // index into tokens_, -1 for the start token
    int32_t ilabel = 0;
    int32_t olabel = 0;
    float graph_cost = 0.0f;  // the arc's weight
    int32_t state = 0;        // the arc's destination
  };
  // Adds (or keeps the better of) a token at `state`; returns whether it was added or replaced one.
  bool Offer(const Token& token);
  // The cutoff for the active tokens; *best gets the best token (index into tokens_).
  double Cutoff(float* adaptive_beam, int32_t* best) const;
  double ProcessEmitting(const Matrix& loglikes, int32_t frame, float acoustic_scale);
  void ProcessNonemitting(double cutoff);

  const AlignGraph& graph_;
  const TransitionModel& model_;
  FasterViterbiOptions options_;
  std::vector<Token> tokens_;          // every token of the utterance; back-pointers index it
  std::vector<int32_t> at_state_;      // per graph state: its active token, -1 where none
  std::vector<int32_t> active_;        // the states with a token, in the order they got one
  std::vector<int32_t> queue_;         // ProcessNonemitting's stack of states
  mutable std::vector<double> costs_;  // Cutoff's scratch
};

}  // namespace gmmscore

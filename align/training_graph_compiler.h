// Training graphs as Kaldi's compile-train-graphs compiles them: per utterance, its words as a
// linear acceptor, composed with the lexicon (L: phones to words), then with the phone-context
// transducer of the decision tree (C: context windows to phones), then with the HMMs of those
// windows (H: transition-ids to windows, without self-loops); determinized in the log semiring
// with epsilons removed, disambiguation symbols removed (optionally some epsilons after them, as
// --rm-eps), costs rounded to 1/1024, minimized as an
// acceptor of (input, output, cost), and the self-loops added last. The result is equal to
// Kaldi's graph up to the numbering of states; its input labels are transition-ids and its output
// labels words.
//
// The context transducer follows Kaldi's context-window conventions: a window of `width` phones
// whose phone at `central` is the one modelled; 0 stands for "no phone" at the utterance's
// edges; a right context is flushed at the end by a subsequential symbol (one above every phone
// and disambiguation symbol) that the lexicon gets as a loop on a new final state.
//
// Transition probabilities enter with transition_scale (the non-self-loop transitions, relative
// to not taking the self-loop) and self_loop_scale (the self-loops, and not taking them);
// compile-train-graphs uses 0 for both, leaving them to the aligner.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "align/fst_ops.h"
#include "model/align_graph.h"
#include "model/transition_model.h"

namespace gmmscore {

// What graph compilation asks of a decision tree: its window and the pdf of (window, pdf-class).
struct PhoneContext {
  int32_t width = 1;
  int32_t central = 0;
  // std::nullopt where the tree has no answer (a tree that does not fit the model).
  std::function<std::optional<int32_t>(std::span<const int32_t> window, int32_t pdf_class)> pdf;
};

struct TrainingGraphOptions {
  float transition_scale = 1.0f;
  float self_loop_scale = 1.0f;
  // Kaldi's --reorder: a visit to an HMM state reads its forward transition first and then its
  // self-loops.
  bool reorder = true;
  // Kaldi's --rm-eps: after determinization, where the graph had disambiguation symbols (now
  // epsilons), some epsilons are removed locally (align/local_epsilon_removal.h) before
  // minimization.
  bool rm_eps = false;
};

class TrainingGraphCompiler {
 public:
  // `lexicon`: L.fst (input labels phones or disambiguation symbols, output labels words).
  // Errors: a disambiguation symbol that is a phone, a context whose central position is outside
  // its width.
  static absl::StatusOr<TrainingGraphCompiler> Create(const TransitionModel& model,
                                                      PhoneContext context,
                                                      const AlignGraph& lexicon,
                                                      std::vector<int32_t> disambig_symbols,
                                                      const TrainingGraphOptions& options);

  // The graph of one transcript (word ids). An empty graph (start -1) where the lexicon cannot
  // spell the words, as Kaldi writes none for such an utterance. Errors: a lexicon label that is
  // neither phone nor disambiguation symbol, a window the tree has no pdf for, a graph that is
  // not determinizable.
  absl::StatusOr<AlignGraph> Compile(std::span<const int32_t> words) const;

 private:
  TrainingGraphCompiler(const TransitionModel& model, PhoneContext context, VectorGraph lexicon,
                        std::vector<int32_t> disambig_symbols, int32_t subsequential_symbol,
                        const TrainingGraphOptions& options)
      : model_(&model),
        context_(std::move(context)),
        lexicon_(std::move(lexicon)),
        disambig_symbols_(std::move(disambig_symbols)),
        subsequential_symbol_(subsequential_symbol),
        options_(options) {}

  const TransitionModel* model_;
  PhoneContext context_;
  VectorGraph lexicon_;
  std::vector<int32_t> disambig_symbols_;  // sorted
  int32_t subsequential_symbol_;
  TrainingGraphOptions options_;
};

}  // namespace gmmscore

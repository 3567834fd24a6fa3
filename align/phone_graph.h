// Training graphs compiled from word or phone sequences, for people without Kaldi's
// compile-train-graphs: per utterance the HMM of each phone in turn (the model's topology, arcs
// labelled with transition-ids, no transition costs: the aligner adds them, as for Kaldi's
// graphs), a word's pronunciations in parallel, and, with an optional silence phone, that phone's
// HMM optional at the start, between every two words and at the end, taken with probability
// silence_prob (graph costs -log p and -log(1 - p), as Kaldi's lexicon FST with silence puts
// them). A phone sequence is a sequence of one-phone words: silence is optional between phones.
//
// Monophone models only: where a (phone, HMM state) has more than one pdf the model is
// context-dependent and its graphs need Kaldi's decision tree (compile-train-graphs).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "model/align_graph.h"
#include "model/transition_model.h"

namespace gmmscore {

struct PhoneGraphOptions {
  int32_t optional_silence = 0;  // a phone id; 0: none
  float silence_prob = 0.5f;     // in (0, 1)
  // Kaldi's --reorder (compile-train-graphs' default): a visit to an HMM state reads as its
  // forward transition-id first and then its self-loops, not the self-loops first.
  bool reorder = true;
};

// A word: its pronunciations, each a phone sequence.
using Pronunciations = std::vector<std::vector<int32_t>>;

// Errors: an empty sequence, a word without pronunciations or with an empty one, a phone the
// topology does not have, a context-dependent model, a silence probability outside (0, 1).
absl::StatusOr<AlignGraph> CompileWordGraph(const TransitionModel& model,
                                            std::span<const Pronunciations> words,
                                            const PhoneGraphOptions& options);

// CompileWordGraph of one-phone words.
absl::StatusOr<AlignGraph> CompilePhoneGraph(const TransitionModel& model,
                                             std::span<const int32_t> phones,
                                             const PhoneGraphOptions& options);

}  // namespace gmmscore

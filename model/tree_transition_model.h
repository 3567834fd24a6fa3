// A transition model made from a tree and a topology, as Kaldi's TransitionModel(ctx_dep, topo)
// constructor makes it (src/hmm/transition-model.cc, with ContextDependency::GetPdfInfo of
// src/tree/context-dep.cc): gmm-init-mono's and gmm-init-model's.
//
// For each pdf, the (phone, pdf class) pairs that can reach it: the tree asked about the phone at
// the central position and the pdf class, every other position free (EventMap::MultiMap). Each
// such pair gives a transition-state (phone, HMM state, pdf, pdf) for every HMM state of the
// phone's topology entry with that pdf class; the tuples are sorted, which numbers the
// transition-states and so the transition-ids. Each transition starts at the topology's
// probability (its float log).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/context_dependency.h"
#include "model/transition_model.h"

namespace gmmscore {

// Kaldi's HmmTopology::NumPdfClasses: 1 + the largest pdf class of an entry's states (at least 1).
int32_t NumPdfClasses(const std::vector<HmmState>& entry);

// Kaldi's warning where a phone's pdf class reaches no pdf (that phone then has no
// transition-states for it) is appended to `warnings`. Errors where a pdf class that a pdf is
// reached with is no state's of the phone, where the tree answers a negative pdf-id, where a
// probability is not > 0, and for topologies whose states have separate self-loop pdf classes
// (chain models: not supported).
absl::StatusOr<TransitionModel> TransitionModelFromTree(const ContextDependency& tree,
                                                        const HmmTopology& topology,
                                                        std::vector<std::string>* warnings);

}  // namespace gmmscore

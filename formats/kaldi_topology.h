// Kaldi's HMM topology (src/hmm/hmm-topology.cc): the <Topology> object a model file holds, and
// the topology files of a lang folder (data/lang/topo, text) that gmm-init-mono reads.
//
// Text:   <Topology> (<TopologyEntry> <ForPhones> PHONE... </ForPhones>
//                      (<State> N [<PdfClass> C | <ForwardPdfClass> C <SelfLoopPdfClass> C]
//                        (<Transition> DST PROB)* </State>)* </TopologyEntry>)* </Topology>
// Binary: <Topology> phones phone-to-entry [-1] #entries (#states (class [self-loop class]
//         #transitions (dst prob)*)*)* </Topology>   (-1: states carry self-loop classes)
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "formats/kaldi_io.h"
#include "model/transition_model.h"

namespace gmmscore {

// One <Topology> ... </Topology> object, binary or text as `in` is, as a model file holds it:
// its shape is left to the model that takes it (TransitionModel::Create).
absl::StatusOr<HmmTopology> ReadKaldiTopology(KaldiReader& in);

// A topology file (an rxfilename, binary or text), checked as Kaldi's HmmTopology::Check checks
// it: every entry for some phone, at least one emitting state, the last state final (no pdf, no
// transitions), probabilities > 0, destinations in range and each once, no non-emitting state
// into the final state, a way into every state but the first, transitions out of every state but
// the last, and pdf classes 0..n-1 with none missing. Errors name the file. Kaldi's warning for
// a state whose probabilities do not sum to 1 (within 0.01) is appended to `warnings`.
absl::StatusOr<HmmTopology> ReadKaldiTopologyFile(const std::string& rxfilename,
                                                  std::vector<std::string>* warnings);

}  // namespace gmmscore

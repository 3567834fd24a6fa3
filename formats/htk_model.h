// HTK acoustic models: text MMFs (master macro files) as HHEd and HERest write them, with the
// grammar of the HTK Book (section 7.10), restricted to single-stream continuous-density HMMs with
// diagonal covariances. Keywords are case-insensitive.
//
// Reading maps the file onto the canonical model:
//  - every distinct emitting state that some HMM uses (a shared ~s macro counts once) becomes one
//    GmmModel state, in the order in which the states are defined in the file; state_names are
//    the ~s macro names, or "hmm_sN" for a state written inside HMM "hmm" (N: HTK state, from 2);
//  - every HMM (~h) becomes a phone, numbered from 1 in file order, with its own topology entry:
//    HTK state i is topology state i-1, the non-emitting entry and exit states have no pdf, the
//    emitting ones are transition-states, and the zeros of the dense <TRANSP> matrix are no
//    transitions (phone names are not kept);
//  - mixtures left out of a state (HTK drops those of weight 0) are not Gaussians of the model;
//  - <GCONST>, the parameter kind, stream weights and macros that no HMM uses (such as the
//    varFloorN variance floors) are ignored.
//
// Writing produces an MMF that HTK reads: one ~s macro per state and, when the transition model
// has HTK's shape (a non-emitting entry state, one pdf per emitting state, every pdf used), one
// HMM per phone. Otherwise (no transition model, or a context-dependent one such as Kaldi's) it
// writes one 3-state HMM "h<state>" per state, which keeps every GMM but not the transition model.
// Floats are written in their shortest exact form, so reading the output gives the same GMMs and,
// for a model read from HTK, the same transition model.
#pragma once

#include <istream>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model/gmm_model.h"

namespace gmmscore {

// `name` is what errors call the input: "NAME: line L: what".
absl::StatusOr<GmmModel> ReadHtkModel(std::istream& is, const std::string& name);
absl::Status WriteHtkModel(const GmmModel& model, std::ostream& os);

}  // namespace gmmscore

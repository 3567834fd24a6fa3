// The HMM side of an acoustic model, with Kaldi's TransitionModel semantics: a topology per phone,
// (phone, HMM state, pdf) tuples numbered from 1 as transition-states, and transition-ids numbered
// from 1 over the outgoing transitions of every transition-state. HTK and Sphinx transition
// matrices are mapped into the same structure so that alignment has one model to work with.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gmmscore {

inline constexpr int32_t kNoPdf = -1;

struct HmmState {
  int32_t forward_pdf_class = kNoPdf;    // kNoPdf: a non-emitting state
  int32_t self_loop_pdf_class = kNoPdf;  // equal to forward_pdf_class except in chain topologies
  std::vector<std::pair<int32_t, float>> transitions;  // (destination state, probability)

  bool operator==(const HmmState&) const = default;
};

// One topology entry per group of phones; the last state of each entry is the final state.
struct HmmTopology {
  std::vector<int32_t> phones;          // sorted, unique, all > 0
  std::vector<int32_t> phone_to_entry;  // indexed by phone, -1 where unused
  std::vector<std::vector<HmmState>> entries;

  const std::vector<HmmState>& TopologyForPhone(int32_t phone) const {
    return entries[phone_to_entry[phone]];
  }
  bool operator==(const HmmTopology&) const = default;
};

struct TransitionTuple {
  int32_t phone = 0;
  int32_t hmm_state = 0;
  int32_t forward_pdf = 0;
  int32_t self_loop_pdf = 0;

  bool operator==(const TransitionTuple&) const = default;
};

class TransitionModel {
 public:
  TransitionModel() = default;
  // Takes the topology, the tuples and the log-probabilities indexed by transition-id (index 0
  // unused, as Kaldi stores them), checks them against each other and computes the index maps.
  static absl::StatusOr<TransitionModel> Create(HmmTopology topology,
                                                std::vector<TransitionTuple> tuples,
                                                std::vector<float> log_probs);

  bool empty() const { return tuples_.empty(); }
  const HmmTopology& topology() const { return topology_; }
  const std::vector<TransitionTuple>& tuples() const { return tuples_; }
  const std::vector<float>& log_probs() const { return log_probs_; }

  int32_t NumTransitionStates() const { return static_cast<int32_t>(tuples_.size()); }
  int32_t NumTransitionIds() const { return static_cast<int32_t>(id_to_state_.size()) - 1; }
  int32_t NumPdfs() const { return num_pdfs_; }
  int32_t NumPhones() const { return topology_.phones.empty() ? 0 : topology_.phones.back(); }

  int32_t TransitionIdToTransitionState(int32_t tid) const { return id_to_state_[tid]; }
  int32_t TransitionIdToPdf(int32_t tid) const { return id_to_pdf_[tid]; }
  int32_t TransitionIdToPhone(int32_t tid) const { return tuples_[id_to_state_[tid] - 1].phone; }
  int32_t TransitionIdToHmmState(int32_t tid) const {
    return tuples_[id_to_state_[tid] - 1].hmm_state;
  }
  // Index of the transition among those leaving its HMM state.
  int32_t TransitionIdToTransitionIndex(int32_t tid) const {
    return tid - state_to_first_id_[id_to_state_[tid]];
  }
  bool IsSelfLoop(int32_t tid) const;
  // Whether the transition enters the final (non-emitting) state of its phone's topology.
  bool IsFinal(int32_t tid) const;
  float TransitionIdToLogProb(int32_t tid) const { return log_probs_[tid]; }
  // The transition-ids of a transition-state are FirstTransitionId(tstate) and the
  // NumTransitionIndices(tstate) - 1 that follow it.
  int32_t FirstTransitionId(int32_t tstate) const { return state_to_first_id_[tstate]; }
  int32_t NumTransitionIndices(int32_t tstate) const {
    return state_to_first_id_[tstate + 1] - state_to_first_id_[tstate];
  }
  // The self-loop transition-id of a transition-state, 0 where it has none.
  int32_t SelfLoopOf(int32_t tstate) const { return self_loop_of_[tstate]; }
  // log(1 - p(self-loop)) of a transition-state (0 where it has no self-loop), in float as Kaldi
  // computes it, so that transition costs added to a graph match Kaldi's to the bit.
  float NonSelfLoopLogProb(int32_t tstate) const { return non_self_loop_log_probs_[tstate]; }

  bool operator==(const TransitionModel& other) const {
    return topology_ == other.topology_ && tuples_ == other.tuples_ &&
           log_probs_ == other.log_probs_;
  }

 private:
  HmmTopology topology_;
  std::vector<TransitionTuple> tuples_;
  std::vector<float> log_probs_;
  // Derived.
  std::vector<int32_t> state_to_first_id_;  // indexed by transition-state (1-based), size T+2
  std::vector<int32_t> id_to_state_;        // indexed by transition-id, [0] unused
  std::vector<int32_t> id_to_pdf_;
  std::vector<int32_t> self_loop_of_;           // indexed by transition-state, [0] unused
  std::vector<float> non_self_loop_log_probs_;  // indexed by transition-state, [0] unused
  int32_t num_pdfs_ = 0;
};

}  // namespace gmmscore

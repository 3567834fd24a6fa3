#include "model/transition_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace gmmscore {
namespace {

absl::Status CheckTopology(const HmmTopology& topo) {
  if (topo.entries.empty()) return absl::InvalidArgumentError("topology has no entries");
  for (size_t i = 0; i < topo.phones.size(); ++i) {
    const int32_t phone = topo.phones[i];
    if (phone <= 0 || (i > 0 && phone <= topo.phones[i - 1])) {
      return absl::InvalidArgumentError("topology phones must be positive, sorted and unique");
    }
    if (phone >= static_cast<int32_t>(topo.phone_to_entry.size()) ||
        topo.phone_to_entry[phone] < 0 ||
        topo.phone_to_entry[phone] >= static_cast<int32_t>(topo.entries.size())) {
      return absl::InvalidArgumentError(absl::StrCat("topology has no entry for phone ", phone));
    }
  }
  for (size_t e = 0; e < topo.entries.size(); ++e) {
    const auto& entry = topo.entries[e];
    if (entry.empty())
      return absl::InvalidArgumentError(absl::StrCat("topology entry ", e, " is empty"));
    const int32_t num_states = static_cast<int32_t>(entry.size());
    for (int32_t s = 0; s < num_states; ++s) {
      for (const auto& [dst, prob] : entry[s].transitions) {
        if (dst < 0 || dst >= num_states) {
          return absl::InvalidArgumentError(absl::StrCat("topology entry ", e, " state ", s,
                                                         ": transition to missing state ", dst));
        }
        if (!(prob >= 0.0f && prob <= 1.0f)) {
          return absl::InvalidArgumentError(absl::StrCat("topology entry ", e, " state ", s,
                                                         ": transition probability ", prob,
                                                         " is not in [0, 1]"));
        }
      }
    }
    if (!entry.back().transitions.empty() || entry.back().forward_pdf_class != kNoPdf) {
      return absl::InvalidArgumentError(
          absl::StrCat("topology entry ", e, ": the last state must be final (no pdf, no arcs)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TransitionModel> TransitionModel::Create(HmmTopology topology,
                                                        std::vector<TransitionTuple> tuples,
                                                        std::vector<float> log_probs) {
  if (absl::Status s = CheckTopology(topology); !s.ok()) return s;
  TransitionModel tm;
  tm.topology_ = std::move(topology);
  tm.tuples_ = std::move(tuples);
  tm.log_probs_ = std::move(log_probs);

  // Transition-ids are int32 and every transition-state has at least one: more states than
  // that cannot be numbered (callers' counts are checked here, not trusted).
  if (tm.tuples_.size() >= size_t(std::numeric_limits<int32_t>::max() / 2)) {
    return absl::InvalidArgumentError(
        absl::StrCat(tm.tuples_.size(), " transition-states: more than int32 ids can number"));
  }
  const int32_t num_tstates = static_cast<int32_t>(tm.tuples_.size());
  tm.state_to_first_id_.assign(num_tstates + 2, 0);
  int64_t next_id = 1;
  for (int32_t ts = 1; ts <= num_tstates + 1; ++ts) {
    tm.state_to_first_id_[ts] = static_cast<int32_t>(next_id);
    if (ts > num_tstates) break;
    const TransitionTuple& t = tm.tuples_[ts - 1];
    if (t.phone <= 0 || t.phone >= static_cast<int32_t>(tm.topology_.phone_to_entry.size()) ||
        tm.topology_.phone_to_entry[t.phone] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("transition-state ", ts, ": phone ", t.phone, " is not in the topology"));
    }
    const auto& entry = tm.topology_.TopologyForPhone(t.phone);
    if (t.hmm_state < 0 || t.hmm_state >= static_cast<int32_t>(entry.size())) {
      return absl::InvalidArgumentError(absl::StrCat("transition-state ", ts, ": HMM state ",
                                                     t.hmm_state, " is not in phone ", t.phone,
                                                     "'s topology"));
    }
    if (t.forward_pdf < 0 || t.self_loop_pdf < 0 ||
        t.forward_pdf == std::numeric_limits<int32_t>::max() ||
        t.self_loop_pdf == std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(absl::StrCat("transition-state ", ts, ": pdf-ids ",
                                                     t.forward_pdf, " and ", t.self_loop_pdf,
                                                     " are not in [0, 2^31 - 2]"));
    }
    tm.num_pdfs_ = std::max({tm.num_pdfs_, t.forward_pdf + 1, t.self_loop_pdf + 1});
    next_id += static_cast<int64_t>(entry[t.hmm_state].transitions.size());
    if (next_id >= std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("transition-state ", ts, ": more transition-ids than int32 numbers"));
    }
  }
  const int32_t num_ids = static_cast<int32_t>(next_id - 1);
  if (static_cast<int32_t>(tm.log_probs_.size()) != num_ids + 1) {
    return absl::InvalidArgumentError(absl::StrCat("expected ", num_ids + 1,
                                                   " transition log-probabilities (transition-ids "
                                                   "1..",
                                                   num_ids, " and an unused 0), got ",
                                                   tm.log_probs_.size()));
  }
  for (int32_t tid = 1; tid <= num_ids; ++tid) {
    if (std::isnan(tm.log_probs_[tid]) || tm.log_probs_[tid] > 1e-4f) {
      return absl::InvalidArgumentError(absl::StrCat("transition-id ", tid, ": log-probability ",
                                                     tm.log_probs_[tid], " is not <= 0"));
    }
  }
  tm.id_to_state_.assign(num_ids + 1, 0);
  tm.id_to_pdf_.assign(num_ids + 1, kNoPdf);
  for (int32_t ts = 1; ts <= num_tstates; ++ts) {
    for (int32_t tid = tm.state_to_first_id_[ts]; tid < tm.state_to_first_id_[ts + 1]; ++tid) {
      tm.id_to_state_[tid] = ts;
    }
  }
  for (int32_t tid = 1; tid <= num_ids; ++tid) {
    const TransitionTuple& t = tm.tuples_[tm.id_to_state_[tid] - 1];
    tm.id_to_pdf_[tid] = tm.IsSelfLoop(tid) ? t.self_loop_pdf : t.forward_pdf;
  }
  tm.self_loop_of_.assign(size_t(num_tstates) + 1, 0);
  tm.non_self_loop_log_probs_.assign(size_t(num_tstates) + 1, 0.0f);
  for (int32_t ts = 1; ts <= num_tstates; ++ts) {
    for (int32_t tid = tm.state_to_first_id_[ts]; tid < tm.state_to_first_id_[ts + 1]; ++tid) {
      if (!tm.IsSelfLoop(tid)) continue;
      tm.self_loop_of_[size_t(ts)] = tid;
      // Single precision throughout, as Kaldi's ComputeDerivedOfProbs: expf, 1 - p, logf; a
      // self-loop of probability 1 leaves 1e-10 for the way out.
      float non_self_loop = static_cast<float>(1.0 - std::exp(tm.log_probs_[size_t(tid)]));
      if (non_self_loop <= 0.0f) non_self_loop = 1.0e-10f;
      tm.non_self_loop_log_probs_[size_t(ts)] = std::log(non_self_loop);
    }
  }
  return tm;
}

bool TransitionModel::IsFinal(int32_t tid) const {
  const TransitionTuple& t = tuples_[id_to_state_[tid] - 1];
  const auto& entry = topology_.TopologyForPhone(t.phone);
  return entry[t.hmm_state].transitions[TransitionIdToTransitionIndex(tid)].first + 1 ==
         static_cast<int32_t>(entry.size());
}

bool TransitionModel::IsSelfLoop(int32_t tid) const {
  const TransitionTuple& t = tuples_[id_to_state_[tid] - 1];
  const auto& state = topology_.TopologyForPhone(t.phone)[t.hmm_state];
  return state.transitions[TransitionIdToTransitionIndex(tid)].first == t.hmm_state;
}

}  // namespace gmmscore

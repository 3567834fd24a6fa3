#include "train/transition_update.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "util/kaldi_blas.h"

namespace gmmscore {
namespace {

// Updates the transitions of `tstates` (all with n transitions) from their pooled counts.
absl::Status UpdateGroup(const TransitionUpdateOptions& options, const TransitionStats& stats,
                         const TransitionModel& model, const std::vector<int32_t>& tstates,
                         std::vector<float>* log_probs, TransitionUpdateSummary* sum) {
  const int32_t n = model.NumTransitionIndices(tstates.front());
  if (n < 2) return absl::OkStatus();  // nothing to estimate
  std::vector<double> counts(size_t(n), 0.0);
  for (const int32_t tstate : tstates) {
    if (model.NumTransitionIndices(tstate) != n) {
      return absl::InvalidArgumentError(
          absl::StrCat("transition-states ", tstates.front(), " and ", tstate,
                       " share a pdf but not their number of transitions: --share-for-pdfs does "
                       "not fit this topology"));
    }
    for (int32_t i = 0; i < n; ++i)
      counts[size_t(i)] += stats[size_t(model.FirstTransitionId(tstate) + i)];
  }
  const double total = KaldiDoubleSum(counts);
  // The summary's sums are floats, as Kaldi keeps them for its log lines.
  sum->count = static_cast<float>(sum->count + total);
  if (total < options.min_count) {
    ++sum->skipped;
    return absl::OkStatus();
  }
  const int32_t first = model.FirstTransitionId(tstates.front());
  std::vector<float> probs(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) probs[size_t(i)] = static_cast<float>(counts[size_t(i)] / total);
  for (int round = 0; round < 3; ++round) {
    const float scale = static_cast<float>(1.0 / static_cast<double>(KaldiFloatSum(probs)));
    for (float& p : probs) p = std::max(p * scale, options.floor);
  }
  for (int32_t i = 0; i < n; ++i) {
    if (probs[size_t(i)] == options.floor) ++sum->floored;
    const float new_log = std::log(probs[size_t(i)]);
    // The old probability as Kaldi measures it: the stored log-probability through exp and back.
    const float old_log = std::log(std::exp(model.TransitionIdToLogProb(first + i)));
    sum->objective_change = static_cast<float>(
        sum->objective_change + counts[size_t(i)] * static_cast<double>(new_log - old_log));
    if (!std::isfinite(new_log)) {
      return absl::InvalidArgumentError(
          absl::StrCat("transition-id ", first + i, ": the new log-probability is ", new_log));
    }
    for (const int32_t tstate : tstates) {
      (*log_probs)[size_t(model.FirstTransitionId(tstate) + i)] = new_log;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TransitionModel> MleUpdateTransitions(const TransitionUpdateOptions& options,
                                                     const TransitionStats& stats,
                                                     const TransitionModel& model,
                                                     TransitionUpdateSummary* summary) {
  if (stats.size() != size_t(model.NumTransitionIds()) + 1) {
    return absl::InvalidArgumentError(absl::StrCat("the transition statistics have ", stats.size(),
                                                   " entries, the model ", model.NumTransitionIds(),
                                                   " transition-ids (+1)"));
  }
  if (!(options.floor >= 0.0f && options.floor < 1.0f)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the transition floor ", options.floor, " is not in [0, 1)"));
  }
  TransitionUpdateSummary sum;
  std::vector<float> log_probs = model.log_probs();
  if (options.share_for_pdfs) {
    std::map<int32_t, std::vector<int32_t>> by_pdf;
    for (int32_t tstate = 1; tstate <= model.NumTransitionStates(); ++tstate) {
      const TransitionTuple& t = model.tuples()[size_t(tstate - 1)];
      by_pdf[t.forward_pdf].push_back(tstate);
      if (t.self_loop_pdf != t.forward_pdf) by_pdf[t.self_loop_pdf].push_back(tstate);
    }
    for (const auto& [pdf, tstates] : by_pdf) {
      absl::Status s = UpdateGroup(options, stats, model, tstates, &log_probs, &sum);
      if (!s.ok()) return s;
    }
  } else {
    for (int32_t tstate = 1; tstate <= model.NumTransitionStates(); ++tstate) {
      absl::Status s = UpdateGroup(options, stats, model, {tstate}, &log_probs, &sum);
      if (!s.ok()) return s;
    }
  }
  auto updated = TransitionModel::Create(model.topology(), model.tuples(), std::move(log_probs));
  if (updated.ok() && summary != nullptr) *summary = sum;
  return updated;
}

}  // namespace gmmscore

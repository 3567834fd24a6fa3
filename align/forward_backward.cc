#include "align/forward_backward.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr double kLogZero = -std::numeric_limits<double>::infinity();

double LogAdd(double a, double b) {
  if (a == kLogZero) return b;
  if (b == kLogZero) return a;
  return a > b ? a + std::log1p(std::exp(b - a)) : b + std::log1p(std::exp(a - b));
}

// The states in an order where every epsilon arc goes forward (Kahn's algorithm).
std::vector<int32_t> EpsilonOrder(const AlignGraph& g) {
  std::vector<int32_t> indegree(static_cast<size_t>(g.num_states()), 0), order, ready;
  for (const GraphArc& arc : g.arcs) {
    if (arc.ilabel == 0) ++indegree[size_t(arc.next)];
  }
  for (int32_t s = 0; s < g.num_states(); ++s) {
    if (indegree[size_t(s)] == 0) ready.push_back(s);
  }
  while (!ready.empty()) {
    const int32_t s = ready.back();
    ready.pop_back();
    order.push_back(s);
    for (int32_t a = g.arc_begin[size_t(s)]; a < g.arc_begin[size_t(s) + 1]; ++a) {
      const GraphArc& arc = g.arcs[size_t(a)];
      if (arc.ilabel == 0 && --indegree[size_t(arc.next)] == 0) ready.push_back(arc.next);
    }
  }
  return order;
}

}  // namespace

absl::StatusOr<ForwardBackwardResult> ForwardBackward(const AlignGraph& g,
                                                      const TransitionModel& model,
                                                      const Matrix& loglikes,
                                                      float acoustic_scale) {
  GMM_RETURN_IF_ERROR(ValidateAlignGraph(g, model.NumTransitionIds()));
  GMM_RETURN_IF_ERROR(EpsilonDepth(g).status());
  if (g.start < 0) return absl::InvalidArgumentError("empty decoding graph");
  if (loglikes.cols != model.NumPdfs()) {
    return absl::InvalidArgumentError(
        absl::StrCat("scores for ", loglikes.cols, " pdfs, the model has ", model.NumPdfs()));
  }
  const int32_t frames = loglikes.rows, states = g.num_states();
  const std::vector<int32_t> order = EpsilonOrder(g);
  const auto arc_logprob = [&](const GraphArc& arc, int32_t t) {
    double p = -double(arc.weight);
    if (arc.ilabel != 0) {
      p += double(acoustic_scale) * loglikes.at(t, model.TransitionIdToPdf(arc.ilabel));
    }
    return p;
  };
  // alpha[t][s]: log probability of the paths from the start that consumed t frames and stand in
  // s; beta[t][s]: of the paths from s after t frames to a final state.
  std::vector<std::vector<double>> alpha(size_t(frames) + 1,
                                         std::vector<double>(size_t(states), kLogZero));
  std::vector<std::vector<double>> beta = alpha;
  alpha[0][size_t(g.start)] = 0.0;
  for (int32_t t = 0; t <= frames; ++t) {
    std::vector<double>& layer = alpha[size_t(t)];
    for (int32_t s : order) {  // epsilon arcs within the frame, forward
      if (layer[size_t(s)] == kLogZero) continue;
      for (int32_t a = g.arc_begin[size_t(s)]; a < g.arc_begin[size_t(s) + 1]; ++a) {
        const GraphArc& arc = g.arcs[size_t(a)];
        if (arc.ilabel != 0) continue;
        layer[size_t(arc.next)] =
            LogAdd(layer[size_t(arc.next)], layer[size_t(s)] + arc_logprob(arc, t));
      }
    }
    if (t == frames) break;
    std::vector<double>& next = alpha[size_t(t) + 1];
    for (int32_t s = 0; s < states; ++s) {
      if (layer[size_t(s)] == kLogZero) continue;
      for (int32_t a = g.arc_begin[size_t(s)]; a < g.arc_begin[size_t(s) + 1]; ++a) {
        const GraphArc& arc = g.arcs[size_t(a)];
        if (arc.ilabel == 0) continue;
        next[size_t(arc.next)] =
            LogAdd(next[size_t(arc.next)], layer[size_t(s)] + arc_logprob(arc, t));
      }
    }
  }
  ForwardBackwardResult result;
  result.total_log_likelihood = kLogZero;
  for (int32_t s = 0; s < states; ++s) {
    if (g.final_cost[size_t(s)] == AlignGraph::kNotFinal) continue;
    beta[size_t(frames)][size_t(s)] = -double(g.final_cost[size_t(s)]);
    result.total_log_likelihood =
        LogAdd(result.total_log_likelihood,
               alpha[size_t(frames)][size_t(s)] + beta[size_t(frames)][size_t(s)]);
  }
  if (result.total_log_likelihood == kLogZero) {
    return absl::NotFoundError(
        absl::StrCat("no path of ", frames, " frames reaches a final state"));
  }
  for (int32_t t = frames; t >= 0; --t) {
    std::vector<double>& layer = beta[size_t(t)];
    if (t < frames) {
      const std::vector<double>& next = beta[size_t(t) + 1];
      for (int32_t s = 0; s < states; ++s) {
        for (int32_t a = g.arc_begin[size_t(s)]; a < g.arc_begin[size_t(s) + 1]; ++a) {
          const GraphArc& arc = g.arcs[size_t(a)];
          if (arc.ilabel == 0 || next[size_t(arc.next)] == kLogZero) continue;
          layer[size_t(s)] = LogAdd(layer[size_t(s)], arc_logprob(arc, t) + next[size_t(arc.next)]);
        }
      }
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {  // epsilon arcs, backward
      const int32_t s = *it;
      for (int32_t a = g.arc_begin[size_t(s)]; a < g.arc_begin[size_t(s) + 1]; ++a) {
        const GraphArc& arc = g.arcs[size_t(a)];
        if (arc.ilabel != 0 || layer[size_t(arc.next)] == kLogZero) continue;
        layer[size_t(s)] = LogAdd(layer[size_t(s)], arc_logprob(arc, t) + layer[size_t(arc.next)]);
      }
    }
  }
  // Frame t's posterior of an emitting arc: alpha before it, the arc, beta after it.
  result.posteriors.resize(size_t(frames));
  for (int32_t t = 0; t < frames; ++t) {
    std::map<int32_t, double> by_tid;
    for (int32_t s = 0; s < states; ++s) {
      const double before = alpha[size_t(t)][size_t(s)];
      if (before == kLogZero) continue;
      for (int32_t a = g.arc_begin[size_t(s)]; a < g.arc_begin[size_t(s) + 1]; ++a) {
        const GraphArc& arc = g.arcs[size_t(a)];
        const double after = beta[size_t(t) + 1][size_t(arc.next)];
        if (arc.ilabel == 0 || after == kLogZero) continue;
        const double p =
            std::exp(before + arc_logprob(arc, t) + after - result.total_log_likelihood);
        if (p > 0.0) by_tid[arc.ilabel] += p;
      }
    }
    for (const auto& [tid, p] : by_tid) {
      result.posteriors[size_t(t)].emplace_back(tid, static_cast<float>(p));
    }
  }
  return result;
}

}  // namespace gmmscore

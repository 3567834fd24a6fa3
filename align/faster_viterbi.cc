#include "align/faster_viterbi.h"

#include <algorithm>
#include <limits>

namespace gmmscore {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

FasterViterbi::FasterViterbi(const AlignGraph& graph, const TransitionModel& model,
                             const FasterViterbiOptions& options)
    : graph_(graph), model_(model), options_(options), at_state_(size_t(graph.num_states()), -1) {}

bool FasterViterbi::Offer(const Token& token) {
  int32_t& slot = at_state_[size_t(token.state)];
  if (slot >= 0 && !(tokens_[size_t(slot)].cost > token.cost)) return false;
  if (slot < 0) active_.push_back(token.state);
  slot = static_cast<int32_t>(tokens_.size());
  tokens_.push_back(token);
  return true;
}

double FasterViterbi::Cutoff(float* adaptive_beam, int32_t* best) const {
  double best_cost = kInf;
  costs_.clear();
  for (int32_t state : active_) {
    const double cost = tokens_[size_t(at_state_[size_t(state)])].cost;
    costs_.push_back(cost);
    if (cost < best_cost) {
      best_cost = cost;
      *best = at_state_[size_t(state)];
    }
  }
  const double beam_cutoff = best_cost + options_.beam;
  double min_active_cutoff = kInf;
  if (costs_.size() > size_t(options_.min_active)) {
    if (options_.min_active == 0) {
      min_active_cutoff = best_cost;
    } else {
      std::nth_element(costs_.begin(), costs_.begin() + options_.min_active, costs_.end());
      min_active_cutoff = costs_[size_t(options_.min_active)];
    }
  }
  if (min_active_cutoff > beam_cutoff) {  // too few tokens within the beam: keep min-active
    *adaptive_beam = static_cast<float>(min_active_cutoff - best_cost + options_.beam_delta);
    return min_active_cutoff;
  }
  *adaptive_beam = options_.beam;
  return beam_cutoff;
}

double FasterViterbi::ProcessEmitting(const Matrix& loglikes, int32_t frame, float acoustic_scale) {
  float adaptive_beam = 0.0f;
  int32_t best = -1;
  const double cutoff = Cutoff(&adaptive_beam, &best);
  const float* frame_loglikes = loglikes.row(frame);
  const auto ac_cost = [&](int32_t tid) -> float {
    return -(acoustic_scale * frame_loglikes[model_.TransitionIdToPdf(tid)]);
  };
  // The previous frame's tokens; the next frame's go into at_state_ and active_.
  std::vector<int32_t> previous;
  previous.reserve(active_.size());
  for (int32_t state : active_) {
    previous.push_back(at_state_[size_t(state)]);
    at_state_[size_t(state)] = -1;
  }
  active_.clear();

  // The best token first, for a tight bound on the next frame's cutoff.
  double next_cutoff = kInf;
  if (best >= 0) {
    const double best_cost = tokens_[size_t(best)].cost;
    const int32_t best_state = tokens_[size_t(best)].state;
    for (int32_t a = graph_.arc_begin[size_t(best_state)];
         a < graph_.arc_begin[size_t(best_state) + 1]; ++a) {
      const GraphArc& arc = graph_.arcs[size_t(a)];
      if (arc.ilabel == 0) continue;
      const double cost = arc.weight + best_cost + ac_cost(arc.ilabel);
      next_cutoff = std::min(next_cutoff, cost + adaptive_beam);
    }
  }
  for (int32_t index : previous) {
    const double prev_cost = tokens_[size_t(index)].cost;
    if (!(prev_cost < cutoff)) continue;
    const int32_t state = tokens_[size_t(index)].state;
    for (int32_t a = graph_.arc_begin[size_t(state)]; a < graph_.arc_begin[size_t(state) + 1];
         ++a) {
      const GraphArc& arc = graph_.arcs[size_t(a)];
      if (arc.ilabel == 0) continue;
      const float ac = ac_cost(arc.ilabel);
      const double cost = arc.weight + prev_cost + ac;
      if (!(cost < next_cutoff)) continue;
      Offer({prev_cost + arc.weight + ac, index, arc.ilabel, arc.olabel, arc.weight, arc.next});
      if (cost + adaptive_beam < next_cutoff) next_cutoff = cost + adaptive_beam;
    }
  }
  return next_cutoff;
}

void FasterViterbi::ProcessNonemitting(double cutoff) {
  queue_.assign(active_.begin(), active_.end());
  while (!queue_.empty()) {
    const int32_t state = queue_.back();
    queue_.pop_back();
    const int32_t index = at_state_[size_t(state)];
    const double cost = tokens_[size_t(index)].cost;
    if (cost > cutoff) continue;
    for (int32_t a = graph_.arc_begin[size_t(state)]; a < graph_.arc_begin[size_t(state) + 1];
         ++a) {
      const GraphArc& arc = graph_.arcs[size_t(a)];
      if (arc.ilabel != 0) continue;
      const double next_cost = cost + arc.weight;
      if (next_cost > cutoff) continue;
      if (Offer({next_cost, index, 0, arc.olabel, arc.weight, arc.next})) {
        queue_.push_back(arc.next);
      }
    }
  }
}

void FasterViterbi::Decode(const Matrix& loglikes, float acoustic_scale) {
  tokens_.clear();
  for (int32_t state : active_) at_state_[size_t(state)] = -1;
  active_.clear();
  if (graph_.start < 0) return;
  Offer({0.0, -1, 0, 0, 0.0f, graph_.start});
  ProcessNonemitting(std::numeric_limits<float>::max());
  for (int32_t frame = 0; frame < loglikes.rows; ++frame) {
    const double cutoff = ProcessEmitting(loglikes, frame, acoustic_scale);
    ProcessNonemitting(cutoff);
  }
}

bool FasterViterbi::ReachedFinal() const {
  for (int32_t state : active_) {
    if (tokens_[size_t(at_state_[size_t(state)])].cost != kInf &&
        graph_.final_cost[size_t(state)] != AlignGraph::kNotFinal) {
      return true;
    }
  }
  return false;
}

std::optional<ViterbiPath> FasterViterbi::BestPath() const {
  const bool final = ReachedFinal();
  int32_t best = -1;
  double best_cost = kInf;
  for (int32_t state : active_) {
    const int32_t index = at_state_[size_t(state)];
    if (!final) {  // the best token, final or not
      if (best < 0 || tokens_[size_t(index)].cost < best_cost) {
        best = index;
        best_cost = tokens_[size_t(index)].cost;
      }
      continue;
    }
    const double cost = tokens_[size_t(index)].cost + graph_.final_cost[size_t(state)];
    if (cost < best_cost && cost != kInf) {
      best = index;
      best_cost = cost;
    }
  }
  if (best < 0) return std::nullopt;
  // The tokens from the start, the start token (no arc) left out.
  std::vector<int32_t> chain;
  for (int32_t t = best; tokens_[size_t(t)].prev >= 0; t = tokens_[size_t(t)].prev) {
    chain.push_back(t);
  }
  std::reverse(chain.begin(), chain.end());
  ViterbiPath path;
  float eps_acoustic = 0.0f;  // epsilon arcs' acoustic share before the first frame
  for (int32_t t : chain) {
    const Token& token = tokens_[size_t(t)];
    const auto total = static_cast<float>(token.cost - tokens_[size_t(token.prev)].cost);
    const float acoustic = total - token.graph_cost;
    path.graph_cost += token.graph_cost;
    path.acoustic_cost += acoustic;
    if (token.olabel != 0) path.words.push_back(token.olabel);
    if (token.ilabel != 0) {
      path.transition_ids.push_back(token.ilabel);
      path.frame_acoustic_costs.push_back(acoustic + eps_acoustic);
      eps_acoustic = 0.0f;
    } else if (path.frame_acoustic_costs.empty()) {
      eps_acoustic += acoustic;
    } else {
      path.frame_acoustic_costs.back() += acoustic;
    }
  }
  if (final) path.graph_cost += graph_.final_cost[size_t(tokens_[size_t(best)].state)];
  return path;
}

}  // namespace gmmscore

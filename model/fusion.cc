#include "model/fusion.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace gmmscore {

absl::StatusOr<FusionRule> ParseFusionRule(const std::string& name) {
  if (name == "max") return FusionRule::kMax;
  if (name == "log-linear") return FusionRule::kLogLinear;
  if (name == "log-add") return FusionRule::kLogAdd;
  if (name == "select") return FusionRule::kSelectBest;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown fusion rule '", name, "' (max, log-linear, log-add, select)"));
}

absl::Status ValidateFusion(FusionSpec* spec, size_t num_models) {
  if (num_models == 0) return absl::InvalidArgumentError("fusion needs at least one model");
  if (spec->weights.empty()) spec->weights.assign(num_models, 1.0f / float(num_models));
  if (spec->weights.size() != num_models) {
    return absl::InvalidArgumentError(
        absl::StrCat(spec->weights.size(), " fusion weights for ", num_models, " models"));
  }
  for (float w : spec->weights) {
    if (!std::isfinite(w) || w < 0.0f) {
      return absl::InvalidArgumentError(absl::StrCat("fusion weight ", w, " is not >= 0"));
    }
  }
  if (spec->rule == FusionRule::kLogAdd) {
    double total = 0.0;
    for (float w : spec->weights) total += w;
    if (std::abs(total - 1.0) > 1e-3) {
      return absl::InvalidArgumentError(
          absl::StrCat("log-add fusion weights must sum to 1, they sum to ", total));
    }
  }
  if (spec->rule == FusionRule::kSelectBest && spec->select_window < 1) {
    return absl::InvalidArgumentError("the selection window must be at least 1 frame");
  }
  return absl::OkStatus();
}

SelectTracker::SelectTracker(int32_t window, size_t num_models)
    : window_(window),
      recent_(num_models, std::vector<double>(size_t(window), 0.0)),
      sums_(num_models, 0.0) {}

size_t SelectTracker::Next(std::span<const float> frame_best) {
  const size_t slot = size_t(frames_seen_ % window_);
  size_t best = 0;
  for (size_t k = 0; k < sums_.size(); ++k) {
    sums_[k] += frame_best[k];
    if (frames_seen_ >= window_) sums_[k] -= recent_[k][slot];
    recent_[k][slot] = frame_best[k];
    if (sums_[k] > sums_[best]) best = k;
  }
  ++frames_seen_;
  return best;
}

namespace {

void SelectBest(const FusionSpec& spec, const std::vector<const Matrix*>& scores, Matrix* out,
                std::vector<int32_t>* selected) {
  const int32_t frames = scores[0]->rows, states = scores[0]->cols;
  SelectTracker tracker(spec.select_window, scores.size());
  std::vector<float> frame_best(scores.size());
  for (int32_t t = 0; t < frames; ++t) {
    for (size_t k = 0; k < scores.size(); ++k) {
      const float* row = scores[k]->row(t);
      frame_best[k] = *std::max_element(row, row + states);
    }
    const size_t best = tracker.Next(frame_best);
    std::copy_n(scores[best]->row(t), states, out->row(t));
    if (selected != nullptr) selected->push_back(static_cast<int32_t>(best));
  }
}

}  // namespace

absl::Status FuseScores(const FusionSpec& spec, const std::vector<const Matrix*>& scores,
                        Matrix* out, std::vector<int32_t>* selected) {
  if (scores.empty()) return absl::InvalidArgumentError("nothing to fuse");
  const int32_t frames = scores[0]->rows, states = scores[0]->cols;
  for (const Matrix* m : scores) {
    if (m->rows != frames || m->cols != states) {
      return absl::InvalidArgumentError(
          absl::StrCat("fused models must score the same frames and states: ", frames, "x", states,
                       " vs ", m->rows, "x", m->cols));
    }
  }
  if (spec.rule != FusionRule::kSelectBest && spec.weights.size() != scores.size()) {
    return absl::InvalidArgumentError("fusion weights do not match the models");
  }
  out->Resize(frames, states);
  if (selected != nullptr) selected->clear();
  const size_t n = out->data.size();
  switch (spec.rule) {
    case FusionRule::kMax:
      for (size_t i = 0; i < n; ++i) {
        float best = scores[0]->data[i];
        for (size_t k = 1; k < scores.size(); ++k) best = std::max(best, scores[k]->data[i]);
        out->data[i] = best;
      }
      break;
    case FusionRule::kLogLinear:
      for (size_t i = 0; i < n; ++i) {
        double sum = 0.0;
        for (size_t k = 0; k < scores.size(); ++k)
          sum += double(spec.weights[k]) * scores[k]->data[i];
        out->data[i] = static_cast<float>(sum);
      }
      break;
    case FusionRule::kLogAdd:
      for (size_t i = 0; i < n; ++i) {
        double best = -std::numeric_limits<double>::infinity();
        for (size_t k = 0; k < scores.size(); ++k) {
          if (spec.weights[k] > 0.0f) best = std::max(best, double(scores[k]->data[i]));
        }
        double sum = 0.0;
        for (size_t k = 0; k < scores.size(); ++k) {
          sum += double(spec.weights[k]) * std::exp(double(scores[k]->data[i]) - best);
        }
        out->data[i] = static_cast<float>(best + std::log(sum));
      }
      break;
    case FusionRule::kSelectBest:
      SelectBest(spec, scores, out, selected);
      break;
  }
  return absl::OkStatus();
}

}  // namespace gmmscore

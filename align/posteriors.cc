#include "align/posteriors.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "absl/strings/str_cat.h"

namespace gmmscore {

Posterior AlignmentToPosterior(const std::vector<int32_t>& alignment) {
  Posterior out(alignment.size());
  for (size_t t = 0; t < alignment.size(); ++t) out[t].push_back({alignment[t], 1.0f});
  return out;
}

void WeightSilencePosterior(const TransitionModel& model, const std::set<int32_t>& silence,
                            float scale, bool distribute, Posterior* posterior) {
  for (FramePosterior& frame : *posterior) {
    if (!distribute) {
      FramePosterior kept;
      for (const auto& [tid, weight] : frame) {
        if (!silence.count(model.TransitionIdToPhone(tid))) {
          kept.push_back({tid, weight});
        } else if (scale != 0.0f) {
          kept.push_back({tid, weight * scale});
        }
      }
      frame = std::move(kept);
      continue;
    }
    float silence_weight = 0.0f, other_weight = 0.0f;
    for (const auto& [tid, weight] : frame) {
      (silence.count(model.TransitionIdToPhone(tid)) ? silence_weight : other_weight) += weight;
    }
    if (silence_weight + other_weight == 0.0f) continue;
    const float frame_scale =
        (silence_weight * scale + other_weight) / (silence_weight + other_weight);
    if (frame_scale == 0.0f) {
      frame.clear();
    } else {
      for (auto& entry : frame) entry.second *= frame_scale;
    }
  }
}

Posterior PosteriorToPdfs(const TransitionModel& model, const Posterior& posterior) {
  Posterior out(posterior.size());
  for (size_t t = 0; t < posterior.size(); ++t) {
    // Kaldi gathers the weights in an unordered_map and writes its entries in the map's order;
    // the same container (libstdc++'s, as Kaldi's builds use) gives the same order.
    std::unordered_map<int32_t, float> by_pdf;
    for (const auto& [tid, weight] : posterior[t]) {
      const int32_t pdf = model.TransitionIdToPdf(tid);
      if (const auto it = by_pdf.find(pdf); it != by_pdf.end()) {
        it->second += weight;
      } else {
        by_pdf.emplace(pdf, weight);
      }
    }
    out[t].reserve(by_pdf.size());
    for (const auto& [pdf, weight] : by_pdf) {
      if (weight != 0.0f) out[t].emplace_back(pdf, weight);
    }
  }
  return out;
}

absl::StatusOr<GaussPosterior> ToGaussPosteriors(const KaldiStoredModel& model, const Matrix& feats,
                                                 const Posterior& posterior, float rand_prune,
                                                 KaldiRandom* random, float* like, float* weight) {
  if (!model.hmm || !model.has_gmms) {
    return absl::InvalidArgumentError("the model has no transition model or no GMMs");
  }
  if (feats.cols != model.dim) {
    return absl::InvalidArgumentError(
        absl::StrCat("features of dimension ", feats.cols, ", the model's is ", model.dim));
  }
  if (posterior.size() != size_t(feats.rows)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Posterior vector has wrong size ", posterior.size(), " vs. ", feats.rows));
  }
  const int32_t num_tids = model.hmm->NumTransitionIds();
  for (size_t t = 0; t < posterior.size(); ++t) {
    for (const auto& [tid, w] : posterior[t]) {
      if (tid < 1 || tid > num_tids) {
        return absl::InvalidArgumentError(absl::StrCat(
            "frame ", t, ": transition-id ", tid, " is not in the model (1 to ", num_tids, ")"));
      }
    }
  }
  const Posterior by_pdf = PosteriorToPdfs(*model.hmm, posterior);
  GaussPosterior out(posterior.size());
  float like_sum = 0.0f, weight_sum = 0.0f;
  for (size_t t = 0; t < by_pdf.size(); ++t) {
    out[t].reserve(by_pdf[t].size());
    for (const auto& [pdf, w] : by_pdf[t]) {
      const KaldiStoredGmm& gmm = model.pdfs[size_t(pdf)];
      std::vector<float> posteriors(size_t(gmm.num_gauss()));
      const float frame_like =
          KaldiComponentPosteriors(gmm, feats.row(int32_t(t)), posteriors.data());
      if (!std::isfinite(frame_like)) {
        return absl::InvalidArgumentError(
            absl::StrCat("frame ", t, ", pdf ", pdf, ": log-likelihood ", frame_like,
                         " (overflow, or invalid variances or features?)"));
      }
      for (float& p : posteriors) {
        p *= w;
        // RandPrune: a small posterior kept at the threshold, at random, in proportion.
        if (rand_prune > 0.0f && p != 0.0f && std::abs(p) < rand_prune) {
          p = (p >= 0.0f ? 1.0f : -1.0f) *
              (random->Uniform() <= std::abs(p) / rand_prune ? rand_prune : 0.0f);
        }
      }
      const bool all_zero =
          std::all_of(posteriors.begin(), posteriors.end(), [](float p) { return p == 0.0f; });
      if (!all_zero) out[t].emplace_back(pdf, std::move(posteriors));
      like_sum += frame_like * w;
      weight_sum += w;
    }
  }
  *like = like_sum;
  *weight = weight_sum;
  return out;
}

}  // namespace gmmscore

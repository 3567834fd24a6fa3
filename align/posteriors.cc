#include "align/posteriors.h"

#include <map>

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
    std::map<int32_t, float> by_pdf;
    for (const auto& [tid, weight] : posterior[t]) by_pdf[model.TransitionIdToPdf(tid)] += weight;
    out[t].assign(by_pdf.begin(), by_pdf.end());
  }
  return out;
}

}  // namespace gmmscore

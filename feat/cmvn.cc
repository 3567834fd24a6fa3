#include "feat/cmvn.h"

#include <cmath>

namespace gmmscore {

void CmvnStats::AddFrame(const float* frame, double weight) {
  count += weight;
  for (size_t d = 0; d < sum.size(); ++d) {
    sum[d] += weight * frame[d];
    sum_sq[d] += weight * double{frame[d]} * frame[d];
  }
}

void CmvnStats::AddFrames(const Matrix& feats) {
  for (int32_t t = 0; t < feats.rows; ++t) AddFrame(feats.row(t));
}

void CmvnStats::SubtractFrame(const float* frame) { AddFrame(frame, -1.0); }

void CmvnStats::Add(const CmvnStats& other) {
  count += other.count;
  for (size_t d = 0; d < sum.size(); ++d) {
    sum[d] += other.sum[d];
    sum_sq[d] += other.sum_sq[d];
  }
}

void ApplyCmvnToFrame(const CmvnStats& stats, bool norm_vars, float* frame) {
  if (stats.count <= 0) return;
  for (size_t d = 0; d < stats.sum.size(); ++d) {
    const double mean = stats.sum[d] / stats.count;
    double scale = 1.0;
    if (norm_vars) {
      const double var = std::max(stats.sum_sq[d] / stats.count - mean * mean, 1e-20);
      scale = 1.0 / std::sqrt(var);
    }
    frame[d] = static_cast<float>((frame[d] - mean) * scale);
  }
}

void ApplyCmvn(const CmvnStats& stats, bool norm_vars, Matrix* feats) {
  for (int32_t t = 0; t < feats->rows; ++t) ApplyCmvnToFrame(stats, norm_vars, feats->row(t));
}

void SlidingCmvn::Process(float* frame) {
  recent_.emplace_back(frame, frame + stats_.sum.size());
  stats_.AddFrame(frame);
  if (static_cast<int32_t>(recent_.size()) > window_) {
    stats_.SubtractFrame(recent_.front().data());
    recent_.pop_front();
  }
  ApplyCmvnToFrame(stats_, norm_vars_, frame);
}

}  // namespace gmmscore

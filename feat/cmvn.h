// Cepstral mean and variance normalisation as Kaldi's apply-cmvn and online2's OnlineCmvn apply
// it: statistics (count, sums, sums of squares) in double; the mean subtracted, and with
// norm_vars each dimension scaled to unit variance (variances floored at 1e-20).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "util/matrix.h"

namespace gmmscore {

// Kaldi's CMVN statistics: count, sum and sum of squares per dimension.
struct CmvnStats {
  explicit CmvnStats(int32_t dim = 0) : sum(dim, 0.0), sum_sq(dim, 0.0) {}
  double count = 0;
  std::vector<double> sum, sum_sq;

  void AddFrame(const float* frame, double weight = 1.0);
  void AddFrames(const Matrix& feats);
  void SubtractFrame(const float* frame);
  void Add(const CmvnStats& other);
};

// Normalises frame in place with stats (apply-cmvn's ApplyCmvn). Does nothing when the count is
// zero.
void ApplyCmvnToFrame(const CmvnStats& stats, bool norm_vars, float* frame);
void ApplyCmvn(const CmvnStats& stats, bool norm_vars, Matrix* feats);

// OnlineCmvn without prior statistics: frame t is normalised with the statistics of the frames
// max(0, t - window + 1) .. t, itself included, so it needs no look-ahead and streams exactly as
// it computes offline. Kaldi's OnlineCmvnOptions default window is 600 frames.
class SlidingCmvn {
 public:
  SlidingCmvn(int32_t dim, int32_t window, bool norm_vars)
      : window_(window), norm_vars_(norm_vars), stats_(dim) {}
  // Normalises the next frame in place.
  void Process(float* frame);

 private:
  int32_t window_;
  bool norm_vars_;
  CmvnStats stats_;
  std::deque<std::vector<float>> recent_;  // the raw frames in the window
};

}  // namespace gmmscore

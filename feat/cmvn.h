// Cepstral mean and variance normalisation as Kaldi's apply-cmvn and online2's OnlineCmvn apply
// it: statistics (count, sums, sums of squares) in double; the mean subtracted, and with
// norm_vars each dimension scaled to unit variance (variances floored at 1e-20).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "absl/status/statusor.h"
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

  // Kaldi's matrix of CMVN statistics (compute-cmvn-stats' output): 2 x (dim + 1), row 0 the sums
  // and the count, row 1 the sums of squares and 0; row-major.
  std::vector<double> KaldiRows() const;
  // From such a matrix (rows 1 or 2; 2 needed for norm_vars); errors say what is wrong. Kaldi's
  // apply-cmvn refuses a count below 1, and so does this.
  static absl::StatusOr<CmvnStats> FromKaldiRows(int32_t rows, int32_t cols,
                                                 const std::vector<double>& data, bool norm_vars);
  // Dimensions left unnormalised (apply-cmvn --skip-dims): their mean 0 and variance 1.
  absl::Status SkipDims(const std::vector<int32_t>& dims);
};

// Normalises frame in place with stats (apply-cmvn's ApplyCmvn). Does nothing when the count is
// zero.
void ApplyCmvnToFrame(const CmvnStats& stats, bool norm_vars, float* frame);
void ApplyCmvn(const CmvnStats& stats, bool norm_vars, Matrix* feats);
// The other way (apply-cmvn --reverse): zero-mean (with norm_vars, unit-variance) features made
// into features of the statistics' mean (and variance), each frame x * stddev + mean, the mean and
// standard deviation rounded to float and applied in float as Kaldi's ApplyCmvnReverse does.
void ApplyCmvnReverse(const CmvnStats& stats, bool norm_vars, Matrix* feats);

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

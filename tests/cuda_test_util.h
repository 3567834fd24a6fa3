// Helpers of the CUDA backend's tests: the error against the float64 reference, poisoned outputs,
// checks shared by the SIMT and tensor tests, and a fixture base that skips, naming the reason,
// where no CUDA device is present (CI).
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cuda/score/cuda_scorer.h"
#include "model/random_model.h"
#include "tests/extreme_case.h"
#include "util/matrix.h"

namespace gmmscore::testing {

inline constexpr double kCudaTolerance = 1e-3;  // nats: the accuracy contract (README)

inline double MaxAbsError(const Matrix& fast, const std::vector<double>& ref) {
  double worst = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    // NaN compares false: count it as the worst error there is.
    const double error = std::abs(double(fast.data[i]) - ref[i]);
    worst = std::isnan(error) ? std::numeric_limits<double>::infinity() : std::max(worst, error);
  }
  return worst;
}

// An output of the right shape that holds NaN everywhere: Score must overwrite all of it.
inline Matrix PoisonedScores(int32_t frames, int32_t states) {
  Matrix out(frames, states);
  std::fill(out.data.begin(), out.data.end(), std::numeric_limits<float>::quiet_NaN());
  return out;
}

// 150 states (two full SIMT groups of 64 and one of 22; nine tensor groups of 16 and one of 6),
// 1 to 300 Gaussians each.
inline RandomModelOptions UnevenModel(int32_t dim) {
  RandomModelOptions o;
  o.dim = dim;
  o.num_states = 150;
  o.min_gauss = 1;
  o.max_gauss = 300;
  return o;
}

// 1000 frames scored in one launch and, with max_frames = 100 and a poisoned output, in ten:
// a frame's arithmetic does not depend on the kernel variant or its place in the window, so the
// scores are identical.
inline void ExpectChunkedLaunchesEqualOneLaunch(const CudaScorerOptions& options) {
  const GmmModel model = RandomModel(UnevenModel(39), 5);
  const Matrix feats = RandomFeatures(1000, 39, 0.0f, 2.5f, 6);
  CudaScorerOptions small = options;
  small.max_frames = 100;
  small.poison_output = true;
  auto whole = CudaScorer::Create(model, options);
  auto chunked = CudaScorer::Create(model, small);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_TRUE(chunked.ok()) << chunked.status();
  Matrix a;
  Matrix b = PoisonedScores(1000, model.num_states());
  ASSERT_TRUE((*whole)->Score(feats, &a).ok());
  ASSERT_TRUE((*chunked)->Score(feats, &b).ok());
  EXPECT_EQ(a, b);
}

inline void ExpectExtremeCaseWithinTolerance(const CudaScorerOptions& options) {
  const ExtremeCase c = ExtremeButValidCase();
  auto scorer = CudaScorer::Create(c.model, options);
  ASSERT_TRUE(scorer.ok()) << scorer.status();
  Matrix out;
  ASSERT_TRUE((*scorer)->Score(c.feats, &out).ok());
  ExpectNearExtremeReference(out, c.reference, kCudaTolerance);
}

// Skips the test, naming the reason, where the CUDA runtime finds no device.
template <typename Base>
class WithCudaDevice : public Base {
 protected:
  void SetUp() override {
    int count = 0;
    const cudaError_t error = cudaGetDeviceCount(&count);
    if (error != cudaSuccess) {
      GTEST_SKIP() << "no CUDA device: " << cudaGetErrorName(error) << " ("
                   << cudaGetErrorString(error) << ")";
    }
    if (count == 0) GTEST_SKIP() << "no CUDA device present";
  }
};

}  // namespace gmmscore::testing

// The expanded form every fast path evaluates. About a per-dimension shift c,
//   log w N(x; mu, var) = K' + sum_d [u'_d (x_d - c_d) + v_d (x_d - c_d)^2]
// with u' = (mu - c) / var, v = -1 / (2 var) and
//   K' = log w - D/2 log 2pi - 1/2 sum_d [log var_d + (mu_d - c_d)^2 / var_d].
// The shift leaves the likelihood unchanged but shrinks the terms whose float32 cancellation
// limits accuracy (Vaněk et al., "Optimization of the Gaussian Mixture Model Evaluation on GPU",
// Interspeech 2011, evaluate the same form; the shift is ours). It cannot shrink them for a
// Gaussian whose mean is far from c in its own standard deviations: those outliers, rare in real
// models, are left out of the expanded form and scored in the direct form beside it
// (model/score_guard.h has the error model).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/gmm_model.h"
#include "model/score_guard.h"

namespace gmmscore {

// The shift the CPU and CUDA layouts use: the mean of all Gaussian means, per dimension.
std::vector<float> MeanOfMeans(const GmmModel& model);

// Gaussians whose c_g = 1/2 sum_d (mu_d - c_d)^2 / var_d exceeds this are outliers. Below it, a
// path with gamma 16 u keeps a state's error within the guard's allowance for r_max up to 431
// nats (model/score_guard.h): the guard need not fire for frames a state matches. Real models
// have few outliers (the Kaldi test model: 2 of its 677 Gaussians), random ones of the
// benchmarks' shape fewer still (4 of case (c)'s 160,000).
inline constexpr double kOutlierCancellation = 512.0;

// c_g above, in double.
double CancellingMagnitude(const GmmModel& model, int64_t gauss, std::span<const float> shift);

// Writes scale * u'_d into u[d] and scale * v_d into v[d] for d < dim (computed in double,
// rounded once) and returns K' in double, unscaled: -inf for a zero weight and for an outlier, so
// that the expanded form leaves both out.
double ExpandGaussian(const GmmModel& model, int64_t gauss, std::span<const float> shift,
                      double scale, float* u, float* v);

// L_g = log w - D/2 log 2pi - 1/2 sum_d log var_d, the part of K' that does not cancel (so that
// log w N(x) = L_g - 1/2 sum_d (x_d - mu_d)^2 / var_d): -inf for a zero weight.
double DirectConstant(const GmmModel& model, int64_t gauss);

// The guard's per-state constants (model/score_guard.h) about `shift`: c_max over the Gaussians
// the expanded form scores, l_max and abs_l_max over all of non-zero weight.
std::vector<StateGuard> StateGuards(const GmmModel& model, std::span<const float> shift);

// The outliers (non-zero weight, c_g > kOutlierCancellation) state by state, in the model's
// order: state s owns gauss[state_begin[s] .. state_begin[s + 1]).
struct Outliers {
  std::vector<uint32_t> state_begin;
  std::vector<int64_t> gauss;
  int64_t size() const { return int64_t(gauss.size()); }
};
Outliers FindOutliers(const GmmModel& model, std::span<const float> shift);

// Appends what the direct-form passes read of one Gaussian (outlier): its mean (not shifted) and
// -1/(2 var) to params, dim floats each, and L_g to lconst.
void AppendDirectForm(const GmmModel& model, int64_t gauss, std::vector<float>* params,
                      std::vector<float>* lconst);

}  // namespace gmmscore

// The expanded form every fast path evaluates. About a per-dimension shift c,
//   log w N(x; mu, var) = K' + sum_d [u'_d (x_d - c_d) + v_d (x_d - c_d)^2]
// with u' = (mu - c) / var, v = -1 / (2 var) and
//   K' = log w - D/2 log 2pi - 1/2 sum_d [log var_d + (mu_d - c_d)^2 / var_d].
// The shift leaves the likelihood unchanged but shrinks the terms whose float32 cancellation
// limits accuracy (Vaněk et al., "Optimization of the Gaussian Mixture Model Evaluation on GPU",
// Interspeech 2011, evaluate the same form; the shift is ours).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/gmm_model.h"

namespace gmmscore {

// The shift the CPU and CUDA layouts use: the mean of all Gaussian means, per dimension.
std::vector<float> MeanOfMeans(const GmmModel& model);

// Writes scale * u'_d into u[d] and scale * v_d into v[d] for d < dim (computed in double,
// rounded once) and returns K' in double, unscaled: -inf for a zero weight.
double ExpandGaussian(const GmmModel& model, int64_t gauss, std::span<const float> shift,
                      double scale, float* u, float* v);

}  // namespace gmmscore

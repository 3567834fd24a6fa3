// The guard against the expanded form's cancellation: which (frame, state) scores a float32 fast
// path may have got wrong by more than the contract allows, decided from the score alone, so that
// the path recomputes just those in the direct form. docs/ARCHITECTURE.md ("Score error model")
// derives it; in short, for Gaussian g of a state, the shift c (model/expanded_form.h), x' = x - c,
// mu' = mu - c and w = 1/var:
//   c_g = 1/2 sum_d w mu'^2      r_g = 1/2 sum_d w (x' - mu')^2      so  log w_g N(x) = L_g - r_g
//   L_g = log w_g - D/2 log 2pi - 1/2 sum_d log var_d.
// The expanded form's running sum stays within c_g + r_g of zero, and the terms it rounds are of
// that size too, so a float32 path errs on a Gaussian's score by about gamma (c_g + r_g) plus the
// rounding of its constants; gamma, a property of the path's arithmetic, is measured by a
// randomized search in the tests. A state's score moves only with the Gaussians within
// kGuardTailNats of it, and for those r_g <= max L - S + kGuardTailNats. Outliers (c_g above
// kOutlierCancellation) are scored in the direct form apart, so c_max covers the others only.
//
// Plain arithmetic on purpose: the CUDA kernels include this header too.
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define GMMSCORE_HOST_DEVICE __host__ __device__
#else
#define GMMSCORE_HOST_DEVICE
#endif

namespace gmmscore {

// The contract (DESIGN.md; docs/ARCHITECTURE.md, "Score error model"): every score within
// max(1e-3, 2^-19 |S|) nats of float64. The relative part covers scores below -524 nats, hundreds
// of nats under any decoder's beam, where float32's own relative error (about 16 u for a sum of
// 2 x 39 terms, u = 2^-24) approaches 1e-3 without any cancellation.
GMMSCORE_HOST_DEVICE inline double ContractTolerance(double score) {
  return fmax(1e-3, 0x1p-19 * fabs(score));
}

// What a fast path may spend of the contract: 90% of it. The rest covers the final rounding to
// float32 (at most u |S|, 3e-5 at |S| = 524) and the log-add's approximate exp2/log2 (relative
// 2^-22 of the log-sum).
GMMSCORE_HOST_DEVICE inline float GuardAllowance(float score) {
  return 0.9f * fmaxf(1e-3f, 0x1p-19f * fabsf(score));
}

// Gaussians further than this below the state's score weigh less than e^-16 = 1.1e-7 in it.
inline constexpr float kGuardTailNats = 16.0f;

// Per state, what the bound needs: max_g c_g, max_g L_g and max_g |L_g| over the state's
// Gaussians of non-zero weight.
struct StateGuard {
  float c_max = 0.0f;
  float l_max = 0.0f;
  float abs_l_max = 0.0f;
};

// The bound on a path's error at a state whose score it computed as `score` (nats): gamma times
// c_max + r_max, r_max = max(0, l_max - score) + kGuardTailNats the largest r of a Gaussian that
// matters, plus the rounding of the constants (2 u |L|).
GMMSCORE_HOST_DEVICE inline float GuardErrorBound(const StateGuard& guard, float score,
                                                  float gamma) {
  const float r_max = fmaxf(0.0f, guard.l_max - score) + kGuardTailNats;
  return gamma * (guard.c_max + r_max) + 0x1p-23f * guard.abs_l_max;
}

// Whether a path of constant gamma must recompute the score in the direct form.
GMMSCORE_HOST_DEVICE inline bool GuardFires(const StateGuard& guard, float score, float gamma) {
  return GuardErrorBound(guard, score, gamma) > GuardAllowance(score);
}

// Whether GuardFires can hold for any score at all, so that a path may leave the state unwatched.
// The bound minus the allowance is piecewise linear in the score, with kinks at l_max and at
// +-524.288 (where the allowance turns relative); for gamma below the allowance's relative slope
// it falls towards both ends, so its maximum is at a kink. Checked with gamma 1% high, for the
// rounding of scores near a kink.
GMMSCORE_HOST_DEVICE inline bool GuardCanFire(const StateGuard& guard, float gamma) {
  if (gamma >= 0.9f * 0x1p-19f) return true;
  const float kinks[3] = {guard.l_max, -524.288f, 524.288f};
  for (const float score : kinks) {
    if (GuardFires(guard, score, 1.01f * gamma)) return true;
  }
  return false;
}

}  // namespace gmmscore

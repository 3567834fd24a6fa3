// What the score-fidelity tests of every path share (docs/ARCHITECTURE.md, "Score error model"):
// a model whose states sit far from the mean of all means with variances down to 0.004, the
// contract's tolerance, the error per unit of the guard's magnitude bound, and a randomized search
// for the (frame, state) a scorer gets most wrong.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/reference_scorer.h"
#include "model/expanded_form.h"
#include "model/random_model.h"
#include "model/score_guard.h"

namespace gmmscore::testing {

// States spread far from the mean of all means (12 per dimension), Gaussians tight around them
// with variances from 0.004 to 4: the shape that made the 1.7e-3 errors.
inline GmmModel AdversarialModel(int32_t dim, int32_t num_states, uint32_t seed) {
  RandomModelOptions o;
  o.dim = dim;
  o.num_states = num_states;
  o.min_gauss = 1;
  o.max_gauss = 40;
  o.mean_scale = 1.5f;
  o.min_var = 0.004f;
  o.max_var = 4.0f;
  o.state_spread = 12.0f;
  return RandomModel(o, seed);
}

struct ErrorSummary {
  double worst_abs = 0.0;     // over scores whose tolerance is 1e-3 (|reference| <= 524)
  double worst_excess = 0.0;  // max |error| / ContractTolerance: at most 1 keeps the contract
  // The gamma a guard would need here: max |error| / GuardErrorBound(reference, gamma = u), in
  // units of u = 2^-24.
  double worst_gamma = 0.0;
  std::string where;        // the frame and state of worst_excess
  std::string gamma_where;  // and of worst_gamma
};

inline ErrorSummary Summarize(const Matrix& out, const std::vector<double>& reference,
                              const std::vector<StateGuard>& guards) {
  ErrorSummary e;
  const int32_t states = out.cols;
  for (size_t i = 0; i < reference.size(); ++i) {
    const double err = std::abs(double(out.data[i]) - reference[i]);
    if (!std::isfinite(err)) {
      e.worst_excess = HUGE_VAL;
      e.where = "non-finite score at frame " + std::to_string(i / states);
      return e;
    }
    if (ContractTolerance(reference[i]) == 1e-3) e.worst_abs = std::max(e.worst_abs, err);
    const StateGuard& guard = guards[i % states];
    if (const double gamma = err / GuardErrorBound(guard, float(reference[i]), 0x1p-24f);
        gamma > e.worst_gamma) {
      e.worst_gamma = gamma;
      e.gamma_where = "frame " + std::to_string(i / states) + ", state " +
                      std::to_string(i % states) + ": " + std::to_string(out.data[i]) +
                      " against " + std::to_string(reference[i]) + ", c_max " +
                      std::to_string(guard.c_max) + ", l_max " + std::to_string(guard.l_max);
    }
    if (const double excess = err / ContractTolerance(reference[i]); excess > e.worst_excess) {
      e.worst_excess = excess;
      e.where = "frame " + std::to_string(i / states) + ", state " + std::to_string(i % states) +
                ": " + std::to_string(out.data[i]) + " against " + std::to_string(reference[i]);
    }
  }
  return e;
}

// The plain expanded form in float32 as a fast path would compute it without the outlier pass and
// the guard: K' + sum_d (u' x' + v x'^2) per Gaussian, x' = x - c, in one chain of float FMAs,
// then a float64 log-add. What the 1.7e-3-nat errors came from: tests show their inputs
// break it.
inline Matrix PlainExpandedForm(const GmmModel& model, const Matrix& feats) {
  const std::vector<float> shift = MeanOfMeans(model);
  std::vector<float> u(size_t(model.dim())), v(size_t(model.dim()));
  Matrix out(feats.rows, model.num_states());
  std::vector<float> x(size_t(model.dim()));
  for (int32_t t = 0; t < feats.rows; ++t) {
    for (int32_t d = 0; d < model.dim(); ++d) x[size_t(d)] = feats.at(t, d) - shift[size_t(d)];
    for (int32_t s = 0; s < model.num_states(); ++s) {
      std::vector<double> scores;
      double best = -HUGE_VAL;
      for (int64_t g = model.gauss_begin(s); g < model.gauss_end(s); ++g) {
        const double l = DirectConstant(model, g);
        if (std::isinf(l)) continue;
        ExpandGaussian(model, g, shift, 1.0, u.data(), v.data());
        float acc = 0.0f;
        for (int32_t d = 0; d < model.dim(); ++d) {
          acc = std::fma(x[size_t(d)], u[size_t(d)], acc);
          acc = std::fma(x[size_t(d)] * x[size_t(d)], v[size_t(d)], acc);
        }
        // K' = L - c, rounded to float as a layout stores it.
        acc += float(l - CancellingMagnitude(model, g, shift));
        scores.push_back(acc);
        best = std::max(best, double(acc));
      }
      double sum = 0.0;
      for (double score : scores) sum += std::exp(score - best);
      out.at(t, s) = float(best + std::log(sum));
    }
  }
  return out;
}

// An adversarial model with its adversarial frames (features seed: seed + 100), their float64
// scores and the guard's constants.
struct AdversarialSet {
  GmmModel model;
  Matrix feats;
  std::vector<double> reference;
  std::vector<StateGuard> guards;
  ErrorSummary Errors(const Matrix& out) const { return Summarize(out, reference, guards); }
};

inline AdversarialSet MakeAdversarialSet(int32_t dim, int32_t num_states, int32_t frames,
                                         uint32_t seed) {
  AdversarialSet set{AdversarialModel(dim, num_states, seed), Matrix(), {}, {}};
  set.feats = AdversarialFeatures(set.model, frames, seed + 100);
  set.reference = ReferenceScores(set.model, set.feats);
  set.guards = StateGuards(set.model, MeanOfMeans(set.model));
  return set;
}

using ScoreFn = std::function<Matrix(const Matrix&)>;

// A randomized search for the frames a scorer gets most wrong: `lineages` frames start from
// AdversarialFeatures; each round perturbs every one (a tenth of a standard deviation of the
// model's spread per dimension, or one dimension by a lot) and keeps the perturbation where the
// chosen objective (|error| / tolerance, or the gamma it needs) grew. Returns the summary
// over every frame tried.
inline ErrorSummary SearchWorstFrames(const GmmModel& model, const ScoreFn& score, bool per_gamma,
                                      int32_t lineages, int32_t rounds, uint32_t seed) {
  const std::vector<StateGuard> guards = StateGuards(model, MeanOfMeans(model));
  const int32_t dim = model.dim();
  Matrix current = AdversarialFeatures(model, lineages, seed);
  std::vector<double> best(size_t(lineages), -1.0);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int32_t> any_dim(0, dim - 1);
  ErrorSummary overall;
  for (int32_t round = 0; round <= rounds; ++round) {
    Matrix trial = current;
    if (round > 0) {
      for (int32_t t = 0; t < lineages; ++t) {
        if (t % 3 == 0) {
          trial.at(t, any_dim(rng)) += 10.0f * normal(rng);
        } else {
          for (int32_t d = 0; d < dim; ++d) trial.at(t, d) += 0.1f * normal(rng);
        }
      }
    }
    const std::vector<double> reference = ReferenceScores(model, trial);
    const Matrix out = score(trial);
    for (int32_t t = 0; t < lineages; ++t) {
      Matrix one_out(1, out.cols);
      std::copy_n(out.row(t), out.cols, one_out.data.begin());
      const std::vector<double> one_ref(reference.begin() + size_t(t) * out.cols,
                                        reference.begin() + size_t(t + 1) * out.cols);
      ErrorSummary e = Summarize(one_out, one_ref, guards);
      if (e.worst_gamma > overall.worst_gamma) {
        overall.gamma_where = "search frame " + std::to_string(t) + ", round " +
                              std::to_string(round) + ", " + e.gamma_where;
      }
      if (e.worst_excess > overall.worst_excess) {
        overall.where = "search frame " + std::to_string(t) + ", round " + std::to_string(round) +
                        ", " + e.where;
      }
      overall.worst_abs = std::max(overall.worst_abs, e.worst_abs);
      overall.worst_excess = std::max(overall.worst_excess, e.worst_excess);
      overall.worst_gamma = std::max(overall.worst_gamma, e.worst_gamma);
      const double objective = per_gamma ? e.worst_gamma : e.worst_excess;
      if (objective > best[size_t(t)]) {
        best[size_t(t)] = objective;
        std::copy_n(trial.row(t), dim, current.row(t));
      }
    }
  }
  return overall;
}

}  // namespace gmmscore::testing

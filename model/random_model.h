// Random models and features of realistic shape: varied Gaussians per state, MFCC-like ranges.
// `gmmscore convert random:...` and the benchmarks make their models with these; the tests make
// their models and inputs with them too.
#pragma once

#include <cstdint>

#include "model/gmm_model.h"
#include "util/matrix.h"

namespace gmmscore {

struct RandomModelOptions {
  int32_t num_states = 37;
  int32_t dim = 13;
  int32_t min_gauss = 1;
  int32_t max_gauss = 24;
  float mean_offset = 0.0f;  // added to every mean and feature (c0 of MFCC sits around -20)
  float mean_scale = 3.0f;
  float min_var = 0.2f;
  float max_var = 4.0f;
  // Each state's means also get its own offset, N(0, state_spread^2) per dimension, so that some
  // states sit far from the mean of all means (0: none, the default).
  float state_spread = 0.0f;
  // The HMM the model carries (empty: none); its pdfs must be the num_states states.
  TransitionModel hmm;
};

// Per state a Gaussian count uniform in [min_gauss, max_gauss], weights 0.05 + U(0,1)
// normalised, means mean_offset + mean_scale N(0,1), variances uniform in [min_var, max_var];
// the same model for the same options and seed.
GmmModel RandomModel(const RandomModelOptions& options, uint32_t seed);

// frames x dim values offset + scale N(0,1).
Matrix RandomFeatures(int32_t frames, int32_t dim, float offset, float scale, uint32_t seed);

// Frames built to be hard for the expanded form's float32 arithmetic (model/score_guard.h): about
// a quarter each
//  - near the mean of one of the Gaussians farthest (in its own standard deviations) from the
//    mean of all means, within a standard deviation or two: the terms are large and cancel;
//  - beyond such a Gaussian, c + t (mu - c) with t in [1.2, 3]: far outside the means;
//  - near any Gaussian's mean but 20 to 60 standard deviations out in one dimension;
//  - 5 to 20 standard deviations out from any Gaussian's mean in every dimension.
// The same frames for the same model and seed.
Matrix AdversarialFeatures(const GmmModel& model, int32_t frames, uint32_t seed);

}  // namespace gmmscore

// The extreme-but-valid case every scorer is tested on: tiny and huge variances, means far from
// zero, and a last frame far from every Gaussian, so scores run from near 0 to about -1e7.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/reference_scorer.h"
#include "model/random_model.h"

namespace gmmscore::testing {

struct ExtremeCase {
  GmmModel model;
  Matrix feats;
  std::vector<double> reference;  // float64 direct form
};

inline ExtremeCase ExtremeButValidCase() {
  RandomModelOptions o;
  o.dim = 39;
  o.num_states = 20;
  o.min_var = 1e-3f;
  o.max_var = 1e3f;
  o.mean_offset = 50.0f;
  o.mean_scale = 10.0f;
  ExtremeCase c{RandomModel(o, 7), RandomFeatures(33, 39, 50.0f, 10.0f, 8), {}};
  for (int32_t d = 0; d < 39; ++d) c.feats.at(32, d) = -200.0f;
  c.reference = ReferenceScores(c.model, c.feats);
  return c;
}

// Float32 keeps ~7 digits, so for huge scores the bound is relative: every score finite and
// within max(tolerance, 2e-6 |reference|).
inline void ExpectNearExtremeReference(const Matrix& out, const std::vector<double>& reference,
                                       double tolerance) {
  ASSERT_EQ(out.data.size(), reference.size());
  for (size_t i = 0; i < reference.size(); ++i) {
    ASSERT_TRUE(std::isfinite(out.data[i])) << i;
    EXPECT_NEAR(out.data[i], reference[i], std::max(tolerance, 2e-6 * std::abs(reference[i]))) << i;
  }
}

}  // namespace gmmscore::testing

// The checks every scoring path makes before it scores: features of the model's dimension with
// only finite values, and models fused together of the same states and dimension.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "util/matrix.h"

namespace gmmscore {

// Features larger than this in magnitude are refused: scores of such frames are no longer finite
// in float32 for real models (x^2 / var overflows), and no front end makes them.
inline constexpr float kMaxFeatureMagnitude = 1e15f;

// Whether one feature value is finite and within kMaxFeatureMagnitude.
inline bool FeatureInRange(float x) {
  return x >= -kMaxFeatureMagnitude && x <= kMaxFeatureMagnitude;
}

// Checks that feats has the model's dimension and only values in range; the error names the frame
// and dimension.
absl::Status CheckFeatures(const Matrix& feats, int32_t dim);

// "value V is not finite" or "value V is outside +-1e15", for the error of a value out of range.
std::string FeatureRangeProblem(float x);

// One model of a fused set, as the error should name it: a file, a served model's name, or "".
struct ModelShape {
  std::string name;
  int32_t num_states = 0;
  int32_t dim = 0;
};

// InvalidArgument naming the first model whose states or dimension differ from the first's.
absl::Status CheckSameShape(std::span<const ModelShape> models);

}  // namespace gmmscore

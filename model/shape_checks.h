// The checks every scoring path makes before it scores: features of the model's dimension with
// only finite values, and models fused together of the same states and dimension.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "util/matrix.h"

namespace gmmscore {

// Checks that feats has the model's dimension and only finite values; the error names the frame.
absl::Status CheckFeatures(const Matrix& feats, int32_t dim);

// One model of a fused set, as the error should name it: a file, a served model's name, or "".
struct ModelShape {
  std::string name;
  int32_t num_states = 0;
  int32_t dim = 0;
};

// InvalidArgument naming the first model whose states or dimension differ from the first's.
absl::Status CheckSameShape(std::span<const ModelShape> models);

}  // namespace gmmscore

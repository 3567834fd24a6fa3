// The interface every scoring backend implements (CPU now; CUDA plugs in beside it): per-state
// log-likelihoods of a batch of feature frames against one resident model.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "util/matrix.h"

namespace gmmscore {

class Scorer {
 public:
  virtual ~Scorer() = default;
  virtual int32_t dim() const = 0;
  virtual int32_t num_states() const = 0;
  virtual std::string name() const = 0;  // "cpu-reference", "cpu-simd", "cuda-auto", ...
  // Scores feats (frames x dim) into out, resized to frames x num_states, states in the model's
  // order, natural-log likelihoods.
  virtual absl::Status Score(const Matrix& feats, Matrix* out) const = 0;
};

}  // namespace gmmscore

#include "feat/splice.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace gmmscore {

absl::StatusOr<Matrix> SpliceFrames(const Matrix& frames, int32_t left, int32_t right) {
  if (frames.rows == 0 || frames.cols == 0) {
    return absl::InvalidArgumentError("cannot splice an empty feature matrix");
  }
  if (left < 0 || right < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("splice context must be >= 0, not left ", left, " and right ", right));
  }
  const int32_t width = 1 + left + right, dim = frames.cols, last = frames.rows - 1;
  Matrix out(frames.rows, width * dim);
  for (int32_t t = 0; t < frames.rows; ++t) {
    for (int32_t j = 0; j < width; ++j) {
      const int32_t from = std::clamp(t + j - left, 0, last);
      std::copy_n(frames.row(from), dim, out.row(t) + size_t(j) * size_t(dim));
    }
  }
  return out;
}

}  // namespace gmmscore

// Frames spliced with their neighbours, as Kaldi's SpliceFrames (splice-feats, and the front of an
// LDA+MLLT model's feature pipeline): output frame t is input frames t-left .. t+right side by
// side, the frames before the first and after the last being copies of the first and the last.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "util/matrix.h"

namespace gmmscore {

// frames x ((1 + left + right) x dim). InvalidArgument for an empty input or a negative context.
absl::StatusOr<Matrix> SpliceFrames(const Matrix& frames, int32_t left, int32_t right);

}  // namespace gmmscore

// A linear or affine feature transform applied to every frame, as Kaldi's transform-feats applies
// LDA, MLLT and fMLLR matrices: y = A x for a transform with as many columns as the features have
// dimensions, y = A x + b for one more column (b). Each output is accumulated in float along the
// input dimension, a fused multiply-add per term. Kaldi's sgemm sums in its BLAS's blocked order,
// which depends on the BLAS and the machine: on Kaldi's own LDA+MLLT and fMLLR features of the
// kit, two thirds of the values are Kaldi's bits and the rest within 5e-6
// (tests/feature_transform_test.cc), and alignments from them are Kaldi's byte for byte.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "util/matrix.h"

namespace gmmscore {

enum class TransformShape { kLinear, kAffine, kBad };

// What a transform is for features of `dim` dimensions.
TransformShape ClassifyTransform(const Matrix& transform, int32_t dim);

// frames x transform.rows. InvalidArgument where the transform fits neither shape.
absl::StatusOr<Matrix> ApplyFeatureTransform(const Matrix& transform, const Matrix& frames);

// Half the log-determinant of A A^T, A the transform's linear part (its first `dim` columns): the
// log-determinant of A where A is square, the "pseudo" one where it reduces the dimension, as
// transform-feats reports it. NaN where A A^T is not positive definite.
double TransformHalfLogDet(const Matrix& transform, int32_t dim);

}  // namespace gmmscore

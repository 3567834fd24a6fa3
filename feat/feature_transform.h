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

// The same for a transform already classified for frames.cols: `shape` is ClassifyTransform's
// answer, kLinear or kAffine (the caller checked it once, as a stream's front end does).
Matrix ApplyClassifiedTransform(const Matrix& transform, TransformShape shape,
                                const Matrix& frames);

// A B, the transform that applies B and then A (Kaldi's ComposeTransforms, compose-transforms):
// where A has as many columns as B has rows, the plain product; where A is affine (one column
// more), B is extended by a last row 0 ... 0 1 (b_is_affine: B's last column is its offset) or by
// a row and a column that are 0 but for a 1 in the corner (B linear), so that C is affine. Each
// value is accumulated in float along the inner dimension, as ApplyFeatureTransform.
// InvalidArgument for an empty matrix or dimensions that fit neither case.
absl::StatusOr<Matrix> ComposeTransforms(const Matrix& a, const Matrix& b, bool b_is_affine);

// Half the log-determinant of A A^T, A the transform's linear part (its first `dim` columns): the
// log-determinant of A where A is square, the "pseudo" one where it reduces the dimension, as
// transform-feats reports it. NaN where A A^T is not positive definite.
double TransformHalfLogDet(const Matrix& transform, int32_t dim);

}  // namespace gmmscore

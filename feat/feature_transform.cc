#include "feat/feature_transform.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"

namespace gmmscore {

TransformShape ClassifyTransform(const Matrix& transform, int32_t dim) {
  if (transform.cols == dim) return TransformShape::kLinear;
  if (transform.cols == dim + 1) return TransformShape::kAffine;
  return TransformShape::kBad;
}

absl::StatusOr<Matrix> ApplyFeatureTransform(const Matrix& transform, const Matrix& frames) {
  const TransformShape shape = ClassifyTransform(transform, frames.cols);
  if (shape == TransformShape::kBad) {
    return absl::InvalidArgumentError(absl::StrCat("transform of dimension ", transform.rows, "x",
                                                   transform.cols, " versus feature dimension ",
                                                   frames.cols));
  }
  return ApplyClassifiedTransform(transform, shape, frames);
}

Matrix ApplyClassifiedTransform(const Matrix& transform, TransformShape shape,
                                const Matrix& frames) {
  const int32_t dim = frames.cols;
  Matrix out(frames.rows, transform.rows);
  for (int32_t t = 0; t < frames.rows; ++t) {
    const float* x = frames.row(t);
    float* y = out.row(t);
    for (int32_t i = 0; i < transform.rows; ++i) {
      const float* a = transform.row(i);
      float sum = 0.0f;
      for (int32_t k = 0; k < dim; ++k) sum = std::fma(x[k], a[k], sum);
      y[i] = sum;
    }
    if (shape == TransformShape::kAffine) {
      for (int32_t i = 0; i < transform.rows; ++i) y[i] += transform.at(i, dim);
    }
  }
  return out;
}

absl::StatusOr<Matrix> ComposeTransforms(const Matrix& a, const Matrix& b, bool b_is_affine) {
  if (b.rows == 0 || a.cols == 0) {
    return absl::InvalidArgumentError("Empty matrix in ComposeTransforms");
  }
  Matrix extended;
  const Matrix* right = &b;
  if (a.cols == b.rows + 1) {
    // A is affine: B gets the last row 0 ... 0 1 (and, where it is linear, a zero last column
    // for the offset).
    extended = Matrix(b.rows + 1, b_is_affine ? b.cols : b.cols + 1);
    for (int32_t i = 0; i < b.rows; ++i) std::copy_n(b.row(i), b.cols, extended.row(i));
    extended.at(b.rows, extended.cols - 1) = 1.0f;
    right = &extended;
  } else if (a.cols != b.rows) {
    return absl::InvalidArgumentError(
        absl::StrCat("ComposeTransforms: mismatched dimensions, a has ", a.cols,
                     " columns and b has ", b.rows, " rows."));
  }
  Matrix c(a.rows, right->cols);
  for (int32_t i = 0; i < a.rows; ++i) {
    for (int32_t j = 0; j < right->cols; ++j) {
      float sum = 0.0f;
      for (int32_t k = 0; k < a.cols; ++k) sum = std::fma(a.at(i, k), right->at(k, j), sum);
      c.at(i, j) = sum;
    }
  }
  return c;
}

double TransformHalfLogDet(const Matrix& transform, int32_t dim) {
  // A A^T (rows x rows) in double, then its Cholesky factor: log det = 2 sum log L_ii.
  const int32_t n = transform.rows;
  std::vector<double> s(size_t(n) * size_t(n));
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t j = 0; j <= i; ++j) {
      double sum = 0.0;
      for (int32_t k = 0; k < dim; ++k) sum += double(transform.at(i, k)) * transform.at(j, k);
      s[size_t(i) * n + j] = sum;
    }
  }
  double half_log_det = 0.0;
  for (int32_t j = 0; j < n; ++j) {
    double d = s[size_t(j) * n + j];
    for (int32_t k = 0; k < j; ++k) d -= s[size_t(j) * n + k] * s[size_t(j) * n + k];
    if (!(d > 0.0)) return std::numeric_limits<double>::quiet_NaN();
    const double l = std::sqrt(d);
    s[size_t(j) * n + j] = l;
    half_log_det += std::log(l);
    for (int32_t i = j + 1; i < n; ++i) {
      double v = s[size_t(i) * n + j];
      for (int32_t k = 0; k < j; ++k) v -= s[size_t(i) * n + k] * s[size_t(j) * n + k];
      s[size_t(i) * n + j] = v / l;
    }
  }
  return half_log_det;
}

}  // namespace gmmscore

// A dense row-major float matrix: feature frames (frames x dimension) and scores
// (frames x states).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace gmmscore {

struct Matrix {
  int32_t rows = 0;
  int32_t cols = 0;
  std::vector<float> data;

  Matrix() = default;
  Matrix(int32_t r, int32_t c) : rows(r), cols(c), data(size_t(r) * size_t(c)) {}

  float* row(int32_t r) { return data.data() + size_t(r) * cols; }
  const float* row(int32_t r) const { return data.data() + size_t(r) * cols; }
  float& at(int32_t r, int32_t c) { return data[size_t(r) * cols + c]; }
  float at(int32_t r, int32_t c) const { return data[size_t(r) * cols + c]; }
  void Resize(int32_t r, int32_t c) {
    rows = r;
    cols = c;
    data.resize(size_t(r) * size_t(c));
  }
  bool operator==(const Matrix&) const = default;
};

// Rows someone else owns (a batch's output buffer, a Matrix), read-only: valid while the owner
// keeps them.
struct MatrixView {
  const float* data = nullptr;
  int32_t rows = 0;
  int32_t cols = 0;

  MatrixView() = default;
  MatrixView(const float* d, int32_t r, int32_t c) : data(d), rows(r), cols(c) {}
  MatrixView(const Matrix& m) : data(m.data.data()), rows(m.rows), cols(m.cols) {}  // NOLINT
  const float* row(int32_t r) const { return data + size_t(r) * cols; }
  Matrix Copy() const {
    Matrix m(rows, cols);
    std::copy_n(data, size_t(rows) * size_t(cols), m.data.data());
    return m;
  }
};

}  // namespace gmmscore

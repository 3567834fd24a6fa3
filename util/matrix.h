// A dense row-major float matrix: feature frames (frames x dimension) and scores
// (frames x states).
#pragma once

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

}  // namespace gmmscore

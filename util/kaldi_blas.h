// Kaldi's vector operations rounded as its BLAS rounds them.
//
// Kaldi calls a BLAS for sums (VectorBase::Sum is a dot product with a stride-0 vector of ones),
// dot products (VecVec: a mel bank's energy) and matrix-vector products (AddMatVec: the DCT of the
// log mel energies; AddVec is axpy), src/matrix/kaldi-vector.cc. These follow OpenBLAS's x86-64
// kernels (0.3.21, Debian 12's) as its Haswell and Zen targets run them (kernel/x86_64/sdot.c,
// ddot.c, saxpy.c, sgemv_t_4.c and their Haswell assembly microkernels): the kernels' own lane
// order, fused multiply-adds where the assembly has them and nowhere else. Those are the kernels
// that made the test kit's Kaldi outputs: with them, compute-mfcc-feats' features of the kit's
// dev speakers are Kaldi's to the last bit. A last bit that
// differs from Kaldi's grows, iteration by iteration, into other alignments, and a log turns it
// into visible differences in features.
#pragma once

#include <cmath>
#include <cstddef>
#include <span>

namespace gmmscore {

// sdot's stride-0 loop: pairs added in float, each pair's sum added to a double, the result
// rounded to float.
inline float KaldiFloatSum(std::span<const float> v) {
  double sum = 0.0;
  size_t i = 0;
  for (; i + 1 < v.size(); i += 2) sum += static_cast<double>(v[i] + v[i + 1]);
  for (; i < v.size(); ++i) sum += static_cast<double>(v[i]);
  return static_cast<float>(sum);
}

// ddot's stride-0 loop: two partial sums, of elements 0 and 2 and of 1 and 3 of each block of
// four, the rest added to the first.
inline double KaldiDoubleSum(std::span<const double> v) {
  double even = 0.0, odd = 0.0;
  size_t i = 0;
  for (; i + 3 < v.size(); i += 4) {
    even += v[i] + v[i + 2];
    odd += v[i + 1] + v[i + 3];
  }
  for (; i < v.size(); ++i) even += v[i];
  return even + odd;
}

// sdot, unit strides: the first n & ~31 products in the assembly microkernel's four 8-lane
// accumulators (fused multiply-adds over blocks of 32; each accumulator's halves added, then the
// accumulators in pairs, then the lanes in pairs), the rest in a double, the kernel's sum last.
inline float KaldiDot(const float* x, const float* y, size_t n) {
  const size_t blocked = n & ~size_t{31};
  float kernel = 0.0f;
  if (blocked > 0) {
    float acc[4][8] = {};
    for (size_t i = 0; i < blocked; i += 32) {
      for (size_t a = 0; a < 4; ++a) {
        for (size_t l = 0; l < 8; ++l) {
          acc[a][l] = std::fma(x[i + 8 * a + l], y[i + 8 * a + l], acc[a][l]);
        }
      }
    }
    float half[4][4];
    for (size_t a = 0; a < 4; ++a) {
      for (size_t l = 0; l < 4; ++l) half[a][l] = acc[a][l] + acc[a][l + 4];
    }
    float lanes[4];
    for (size_t l = 0; l < 4; ++l) {
      lanes[l] = (half[0][l] + half[1][l]) + (half[2][l] + half[3][l]);
    }
    kernel = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
  }
  double sum = 0.0;
  for (size_t i = blocked; i < n; ++i) sum += static_cast<double>(x[i] * y[i]);
  sum += static_cast<double>(kernel);
  return static_cast<float>(sum);
}

// saxpy, y += alpha x: fused multiply-adds in the assembly microkernel's blocks of 32 elements, a
// product and a sum for the rest (the kernel's C loop, compiled without FMA).
inline void KaldiAxpy(float alpha, const float* x, float* y, size_t n) {
  const size_t blocked = n & ~size_t{31};
  for (size_t i = 0; i < blocked; ++i) y[i] = std::fma(alpha, x[i], y[i]);
  for (size_t i = blocked; i < n; ++i) y[i] += alpha * x[i];
}

// y = A x, A rows x cols row-major (Kaldi's AddMatVec(1.0, A, kNoTrans, x, 0.0)): sgemv_t's
// order. Columns [0, cols & ~3) go through the kernels in row groups: four rows at a time in the
// assembly's eight fused multiply-add lanes, then two rows in four plain lanes (C), then a last
// row in eight plain lanes (C) (the first four columns into lanes 0-3 where the count is 4 mod 8;
// lanes folded in half, then in pairs); the last cols % 4 columns are added after, left to right.
inline void KaldiMatVec(const float* a, size_t rows, size_t cols, const float* x, float* y) {
  const size_t tail = cols & 3, main = cols - tail;
  auto eight_lanes = [&](const float* row, bool fused) {
    float acc[8] = {};
    size_t k = 0;
    if (main % 8 == 4) {
      for (size_t l = 0; l < 4; ++l) {
        acc[l] = fused ? std::fma(row[l], x[l], acc[l]) : acc[l] + row[l] * x[l];
      }
      k = 4;
    }
    for (; k + 8 <= main; k += 8) {
      for (size_t l = 0; l < 8; ++l) {
        acc[l] = fused ? std::fma(row[k + l], x[k + l], acc[l]) : acc[l] + row[k + l] * x[k + l];
      }
    }
    for (size_t l = 0; l < 4; ++l) acc[l] = acc[l] + acc[l + 4];
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
  };
  auto four_lanes = [&](const float* row) {
    float acc[4] = {};
    for (size_t k = 0; k + 4 <= main; k += 4) {
      for (size_t l = 0; l < 4; ++l) acc[l] = acc[l] + row[k + l] * x[k + l];
    }
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
  };
  const size_t grouped = rows & ~size_t{3}, paired = rows & 2 ? grouped + 2 : grouped;
  for (size_t r = 0; r < rows; ++r) {
    const float* row = a + r * cols;
    float sum = r < grouped ? eight_lanes(row, true)
                            : (r < paired ? four_lanes(row) : eight_lanes(row, false));
    sum = 0.0f + sum;
    if (tail > 0) {
      float t = row[main] * x[main];
      for (size_t i = 1; i < tail; ++i) t = t + row[main + i] * x[main + i];
      sum = sum + t;
    }
    y[r] = sum;
  }
}

}  // namespace gmmscore

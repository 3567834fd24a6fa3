// Kaldi's vector operations rounded as its BLAS rounds them.
//
// Kaldi's training steps call a BLAS for sums: VectorBase::Sum is a dot product with a stride-0
// vector of ones (src/matrix/kaldi-vector.cc). These follow OpenBLAS's x86-64 kernels
// (kernel/x86_64/sdot.c and ddot.c, as in 0.3.21, Debian 12's), the BLAS of the Kaldi build that
// made the test kit. A last bit that differs from Kaldi's grows, iteration by iteration, into other
// alignments, so training that is to end where Kaldi's ends rounds as Kaldi does.
#pragma once

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

}  // namespace gmmscore

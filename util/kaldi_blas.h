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

// The kernels that round with fused multiply-adds: compiled for processors with FMA instructions
// (hardware FMA, about a third of the front end's time otherwise) and portably; both give the
// same bits. Floating-point contraction is off in both, so that only the kernels' own fused
// operations are fused.
namespace kaldi_blas_portable {
#define KALDI_BLAS_FMA(a, b, c) std::fma(a, b, c)
#include "util/kaldi_blas_kernels.inc"
#undef KALDI_BLAS_FMA
}  // namespace kaldi_blas_portable

#if defined(__x86_64__) && defined(__GNUC__)
#define GMMSCORE_KALDI_BLAS_HARDWARE_FMA 1
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("fma")
#pragma GCC optimize("fp-contract=off")
#endif
namespace kaldi_blas_fma {
#define KALDI_BLAS_FMA(a, b, c) __builtin_fmaf(a, b, c)
#include "util/kaldi_blas_kernels.inc"
#undef KALDI_BLAS_FMA
}  // namespace kaldi_blas_fma
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

inline bool HasHardwareFma() {
  static const bool has = __builtin_cpu_supports("fma");
  return has;
}
#endif

// sdot, unit strides: the first n & ~31 products in the Haswell microkernel's fused lanes, the
// rest in a double (util/kaldi_blas_kernels.inc).
inline float KaldiDot(const float* x, const float* y, size_t n) {
#ifdef GMMSCORE_KALDI_BLAS_HARDWARE_FMA
  if (HasHardwareFma()) return kaldi_blas_fma::Dot(x, y, n);
#endif
  return kaldi_blas_portable::Dot(x, y, n);
}

// saxpy, y += alpha x.
inline void KaldiAxpy(float alpha, const float* x, float* y, size_t n) {
#ifdef GMMSCORE_KALDI_BLAS_HARDWARE_FMA
  if (HasHardwareFma()) return kaldi_blas_fma::Axpy(alpha, x, y, n);
#endif
  kaldi_blas_portable::Axpy(alpha, x, y, n);
}

// y = A x, A rows x cols row-major (Kaldi's AddMatVec(1.0, A, kNoTrans, x, 0.0)) in sgemv_t's
// order.
inline void KaldiMatVec(const float* a, size_t rows, size_t cols, const float* x, float* y) {
#ifdef GMMSCORE_KALDI_BLAS_HARDWARE_FMA
  if (HasHardwareFma()) return kaldi_blas_fma::MatVec(a, rows, cols, x, y);
#endif
  kaldi_blas_portable::MatVec(a, rows, cols, x, y);
}

}  // namespace gmmscore

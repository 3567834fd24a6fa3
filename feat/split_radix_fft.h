// The FFT of Kaldi's feature extraction, rounded as Kaldi rounds it: a split-radix complex FFT
// in float on separate real and imaginary arrays (Sorensen, Heideman and Burrus, "On computing
// the split-radix FFT", IEEE Trans. ASSP 34(1), 1986), with Kaldi's twiddle tables (cosines and
// the sums and differences the butterflies use, all in float), its
// order of operations and its real-input wrapper (src/matrix/srfft.h). An MFCC frame that is to
// be Kaldi's to the last bit needs this FFT's bits: another FFT (FFTW's) rounds elsewhere, and
// the log of a small mel energy turns the last bit of a power into a visible difference.
#pragma once

#include <cstdint>
#include <vector>

namespace gmmscore {

// The complex FFT of n points, n a power of two: data re[k] + i im[k] in place, forward
// (exp(-2 pi i j k / n)), unnormalised.
class SplitRadixComplexFft {
 public:
  explicit SplitRadixComplexFft(int32_t n);
  int32_t size() const { return n_; }
  void Forward(float* re, float* im) const;

 private:
  // The butterflies of a 2^log_n-point transform; the outputs come out in bit-reversed order.
  void Butterflies(float* re, float* im, int32_t log_n) const;

  // For the 2^level-point stage (level >= 4): for each k in [1, 2^level / 4) but 2^level / 8,
  // cos(2 pi k / m), -(sin + cos) and sin - cos, then the same for 3k.
  struct Twiddles {
    std::vector<float> cos1, neg_sum1, diff1, cos3, neg_sum3, diff3;
  };
  int32_t n_ = 0;
  int32_t log_n_ = 0;
  std::vector<Twiddles> twiddles_;  // [level - 4]
  std::vector<int32_t> bit_reversed_;
};

// The FFT of n real points (n a power of two, at least 4) as Kaldi's SplitRadixRealFft packs it:
// data[0] the DC term, data[1] the Nyquist term (both real), data[2k] and data[2k + 1] the real
// and imaginary parts of bin k for 0 < k < n / 2.
class SplitRadixRealFft {
 public:
  explicit SplitRadixRealFft(int32_t n);
  int32_t size() const { return n_; }
  void Forward(float* data);

 private:
  int32_t n_;
  SplitRadixComplexFft complex_;  // of n / 2 points
  std::vector<float> re_, im_;    // scratch
};

}  // namespace gmmscore

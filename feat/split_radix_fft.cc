#include "feat/split_radix_fft.h"

#include <cmath>
#include <numbers>
#include <utility>

namespace gmmscore {

SplitRadixComplexFft::SplitRadixComplexFft(int32_t n) : n_(n) {
  while ((1 << log_n_) < n) ++log_n_;
  // The tables as Kaldi's ComputeTables makes them: the angle rounded to float, its cosine and
  // sine in float, their sum and difference in float.
  constexpr double kTwoPi = 2 * std::numbers::pi;
  for (int32_t level = 4; level <= log_n_; ++level) {
    const int32_t m = 1 << level, quarter = m / 4, eighth = m / 8;
    Twiddles t;
    for (int32_t k = 1; k < quarter; ++k) {
      if (k == eighth) continue;
      float angle = static_cast<float>(k * kTwoPi / m);
      float c = std::cos(angle), s = std::sin(angle);
      t.cos1.push_back(c);
      t.neg_sum1.push_back(-(s + c));
      t.diff1.push_back(s - c);
      angle = static_cast<float>(3 * k * kTwoPi / m);
      c = std::cos(angle);
      s = std::sin(angle);
      t.cos3.push_back(c);
      t.neg_sum3.push_back(-(s + c));
      t.diff3.push_back(s - c);
    }
    twiddles_.push_back(std::move(t));
  }
  bit_reversed_.resize(size_t(n));
  for (int32_t i = 0; i < n; ++i) {
    int32_t r = 0;
    for (int32_t b = 0; b < log_n_; ++b) r |= ((i >> b) & 1) << (log_n_ - 1 - b);
    bit_reversed_[size_t(i)] = r;
  }
}

void SplitRadixComplexFft::Forward(float* re, float* im) const {
  Butterflies(re, im, log_n_);
  for (int32_t i = 0; i < n_; ++i) {
    const int32_t j = bit_reversed_[size_t(i)];
    if (j > i) {
      std::swap(re[i], re[j]);
      std::swap(im[i], im[j]);
    }
  }
}

void SplitRadixComplexFft::Butterflies(float* re, float* im, int32_t log_n) const {
  // Sum and difference of a pair, in place: (a, b) -> (a + b, a - b).
  auto sum_diff = [](float& a, float& b) {
    const float sum = a + b;
    b = a - b;
    a = sum;
  };
  // For the pair (a, b) of the L-shaped split: a + i b's rotations by -i, in Kaldi's order.
  auto rotate_pair = [](float& re_a, float& im_a, float& re_b, float& im_b) {
    const float new_re_a = re_a + im_b, new_im_b = im_a + re_b;
    im_a = im_a - re_b;
    re_b = re_a - im_b;
    re_a = new_re_a;
    im_b = new_im_b;
  };
  if (log_n == 0) return;
  if (log_n == 1) {
    sum_diff(re[0], re[1]);
    sum_diff(im[0], im[1]);
    return;
  }
  if (log_n == 2) {
    sum_diff(re[0], re[2]);
    sum_diff(im[0], im[2]);
    sum_diff(re[1], re[3]);
    sum_diff(im[1], im[3]);
    sum_diff(re[0], re[1]);
    sum_diff(im[0], im[1]);
    rotate_pair(re[2], im[2], re[3], im[3]);
    return;
  }
  const int32_t m = 1 << log_n, half = m / 2, quarter = m / 4, eighth = m / 8;
  for (int32_t k = 0; k < half; ++k) {
    sum_diff(re[k], re[k + half]);
    sum_diff(im[k], im[k + half]);
  }
  float* re_a = re + half;
  float* im_a = im + half;
  float* re_b = re_a + quarter;
  float* im_b = im_a + quarter;
  for (int32_t k = 0; k < quarter; ++k) rotate_pair(re_a[k], im_a[k], re_b[k], im_b[k]);
  // The twiddle factors of the two quarter-length parts: exp(-2 pi i k / m) and its cube.
  const float sqrt_half = static_cast<float>(std::numbers::sqrt2 / 2);
  const Twiddles* t = log_n >= 4 ? &twiddles_[size_t(log_n - 4)] : nullptr;
  for (int32_t k = 1, j = 0; k < quarter; ++k) {
    if (k == eighth) {
      float tmp = sqrt_half * (re_a[k] + im_a[k]);
      im_a[k] = sqrt_half * (im_a[k] - re_a[k]);
      re_a[k] = tmp;
      tmp = sqrt_half * (im_b[k] - re_b[k]);
      im_b[k] = -sqrt_half * (re_b[k] + im_b[k]);
      re_b[k] = tmp;
      continue;
    }
    float common = t->cos1[size_t(j)] * (re_a[k] + im_a[k]);
    float new_im = t->neg_sum1[size_t(j)] * re_a[k] + common;
    re_a[k] = t->diff1[size_t(j)] * im_a[k] + common;
    im_a[k] = new_im;
    common = t->cos3[size_t(j)] * (re_b[k] + im_b[k]);
    new_im = t->neg_sum3[size_t(j)] * re_b[k] + common;
    re_b[k] = t->diff3[size_t(j)] * im_b[k] + common;
    im_b[k] = new_im;
    ++j;
  }
  Butterflies(re, im, log_n - 1);
  Butterflies(re_a, im_a, log_n - 2);
  Butterflies(re_b, im_b, log_n - 2);
}

SplitRadixRealFft::SplitRadixRealFft(int32_t n)
    : n_(n), complex_(n / 2), re_(size_t(n / 2)), im_(size_t(n / 2)) {}

void SplitRadixRealFft::Forward(float* data) {
  const int32_t n = n_, half = n / 2;
  // The n real points as n / 2 complex ones, transformed.
  for (int32_t i = 0; i < half; ++i) {
    re_[size_t(i)] = data[2 * i];
    im_[size_t(i)] = data[2 * i + 1];
  }
  complex_.Forward(re_.data(), im_.data());
  for (int32_t i = 0; i < half; ++i) {
    data[2 * i] = re_[size_t(i)];
    data[2 * i + 1] = im_[size_t(i)];
  }
  // Untangling the two real transforms: bins k and n/2 - k from C_k + w^k D_k, w = exp(-2 pi i /
  // n) raised to k by repeated complex multiplication in float, as Kaldi raises it.
  const float angle = static_cast<float>(2 * std::numbers::pi / n * -1);
  const float root_re = std::cos(angle), root_im = std::sin(angle);
  float w_re = 1.0f, w_im = 0.0f;
  for (int32_t k = 1; 2 * k <= half; ++k) {
    const float next_re = (w_re * root_re) - (w_im * root_im);
    w_im = w_re * root_im + w_im * root_re;
    w_re = next_re;
    const float c_re = 0.5f * (data[2 * k] + data[n - 2 * k]);
    const float c_im = 0.5f * (data[2 * k + 1] - data[n - 2 * k + 1]);
    const float d_re = 0.5f * (data[2 * k + 1] + data[n - 2 * k + 1]);
    const float d_im = -0.5f * (data[2 * k] - data[n - 2 * k]);
    data[2 * k] = c_re + (w_re * d_re - w_im * d_im);
    data[2 * k + 1] = c_im + (w_re * d_im + w_im * d_re);
    const int32_t mirror = half - k;
    if (mirror != k) {
      data[2 * mirror] = c_re + ((-w_re) * d_re - w_im * (-d_im));
      data[2 * mirror + 1] = -c_im + ((-w_re) * (-d_im) + w_im * d_re);
    }
  }
  const float dc = data[0] + data[1], nyquist = data[0] - data[1];
  data[0] = dc;
  data[1] = nyquist;
}

}  // namespace gmmscore

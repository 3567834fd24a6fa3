#include "feat/feature_window.h"

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "absl/strings/str_cat.h"
#include "util/kaldi_blas.h"

namespace gmmscore {

int32_t FrameOptions::PaddedWindowSize() const {
  const int32_t size = WindowSize();
  if (!round_to_power_of_two) return size;
  int32_t padded = 1;
  while (padded < size) padded *= 2;
  return padded;
}

absl::Status FrameOptions::Validate() const {
  if (!(samp_freq > 0) || samp_freq > 1e6) {
    return absl::InvalidArgumentError(absl::StrCat("bad --sample-frequency ", samp_freq));
  }
  // The ranges first: WindowShift() and WindowSize() convert to int32.
  if (!(frame_shift_ms > 0) || frame_shift_ms > 10000 || WindowShift() < 1) {
    return absl::InvalidArgumentError(absl::StrCat("--frame-shift ", frame_shift_ms,
                                                   " ms: a shift needs 1 sample to 10 seconds"));
  }
  if (!(frame_length_ms > 0) || frame_length_ms > 10000 || WindowSize() < 2) {
    return absl::InvalidArgumentError(absl::StrCat("--frame-length ", frame_length_ms,
                                                   " ms: a window needs 2 samples to 10 seconds"));
  }
  if (!(dither >= 0)) return absl::InvalidArgumentError(absl::StrCat("bad --dither ", dither));
  if (!std::isfinite(preemph_coeff) || preemph_coeff < 0 || preemph_coeff > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--preemphasis-coefficient ", preemph_coeff, " is not in [0, 1]"));
  }
  for (const char* known : {"hamming", "hanning", "povey", "rectangular", "sine", "blackman"}) {
    if (window_type == known) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown --window-type '", window_type,
                                                 "' (hamming, hanning, povey, rectangular, sine, "
                                                 "blackman)"));
}

GaussianNoise::GaussianNoise(uint64_t seed) {
  // splitmix64 spreads the seed over the state, as xoshiro's authors advise.
  for (uint64_t& s : s_) {
    seed += 0x9e3779b97f4a7c15ull;
    uint64_t z = seed;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    s = z ^ (z >> 31);
  }
}

uint64_t GaussianNoise::Next() {  // xoshiro256**
  const auto rotl = [](uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

namespace {

// The ziggurat of the standard normal density f(x) = exp(-x^2 / 2), unnormalized: kLayers layers of
// equal area kArea, layer 0 being the rectangle under f up to kTail plus the tail past it. edge[i]
// is the right edge of layer i (edge[0] the width a rectangle of layer 0's area would have,
// edge[kLayers] = 0); inner[i] = edge[i + 1] / edge[i], the share of layer i that lies wholly under
// f. The constants are Doornik's for 128 layers.
constexpr int kLayers = 128;
constexpr double kTail = 3.442619855899;
constexpr double kArea = 9.91256303526217e-3;

struct Ziggurat {
  double edge[kLayers + 1];
  double inner[kLayers];
  Ziggurat() {
    double f = std::exp(-0.5 * kTail * kTail);
    edge[0] = kArea / f;
    edge[1] = kTail;
    for (int i = 2; i < kLayers; ++i) {
      // Layer i - 1 spans [0, edge[i - 1]] between heights f(edge[i - 1]) and f(edge[i]).
      edge[i] = std::sqrt(-2.0 * std::log(kArea / edge[i - 1] + f));
      f = std::exp(-0.5 * edge[i] * edge[i]);
    }
    edge[kLayers] = 0.0;
    for (int i = 0; i < kLayers; ++i) inner[i] = edge[i + 1] / edge[i];
  }
};

const Ziggurat& TheZiggurat() {
  static const Ziggurat z;
  return z;
}

}  // namespace

template <typename Table>
double GaussianNoise::Draw(const Table& z) {
  while (true) {
    const uint64_t bits = Next();
    const int layer = static_cast<int>(bits & (kLayers - 1));
    // A uniform value in (-1, 1) from the top 53 bits (the layer's bits are not among them).
    const double u = 2.0 * ((static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53) - 1.0;
    const double x = u * z.edge[layer];
    if (std::abs(u) < z.inner[layer]) return x;  // wholly under the density
    if (layer == 0) {
      // Past kTail: Marsaglia's tail method, x = kTail + a with a exponential, accepted by
      // exp(-a^2 / 2).
      double a, b;
      do {
        a = -std::log(Uniform()) / kTail;
        b = -std::log(Uniform());
      } while (2.0 * b < a * a);
      return u < 0 ? -(kTail + a) : kTail + a;
    }
    // In the wedge past the layer's inner part: a uniform height within the layer, accepted
    // below f(x). The layer's bottom f(edge[layer]) and top f(edge[layer + 1]), over f(x):
    const double bottom = std::exp(-0.5 * (z.edge[layer] * z.edge[layer] - x * x));
    const double top = std::exp(-0.5 * (z.edge[layer + 1] * z.edge[layer + 1] - x * x));
    if (top + Uniform() * (bottom - top) < 1.0) return x;
  }
}

double GaussianNoise::Normal() { return Draw(TheZiggurat()); }

void GaussianNoise::Add(float sigma, float* values, int32_t n) {
  const Ziggurat& z = TheZiggurat();
  for (int32_t i = 0; i < n; ++i) values[i] += static_cast<float>(Draw(z)) * sigma;
}

void KaldiDither::Add(float sigma, float* values, int32_t n) {
  unsigned int frame_seed = static_cast<unsigned int>(process_.Rand()) + 27437u;
  auto uniform = [&frame_seed] {
    return static_cast<float>((rand_r(&frame_seed) + 1.0) / (RAND_MAX + 2.0));
  };
  for (int32_t i = 0; i < n; ++i) {
    const float u1 = uniform();
    const float u2 = uniform();
    const float gauss = sqrtf(-2 * logf(u1)) * cosf(static_cast<float>(2 * std::numbers::pi * u2));
    values[i] += gauss * sigma;
  }
}

int64_t NumFrames(int64_t num_samples, const FrameOptions& opts) {
  const int64_t shift = opts.WindowShift(), size = opts.WindowSize();
  if (opts.snip_edges) return num_samples < size ? 0 : 1 + (num_samples - size) / shift;
  return (num_samples + shift / 2) / shift;
}

int64_t FirstSampleOfFrame(int64_t frame, const FrameOptions& opts) {
  const int64_t shift = opts.WindowShift();
  if (opts.snip_edges) return frame * shift;
  return frame * shift + shift / 2 - opts.WindowSize() / 2;
}

std::vector<float> WindowFunction(const FrameOptions& opts) {
  const int32_t n = opts.WindowSize();
  std::vector<float> w(static_cast<size_t>(n));
  const double a = 2 * std::numbers::pi / (n - 1);
  for (int32_t i = 0; i < n; ++i) {
    const double c = std::cos(a * i);
    const std::string& t = opts.window_type;
    if (t == "hanning") {
      w[i] = static_cast<float>(0.5 - 0.5 * c);
    } else if (t == "sine") {
      w[i] = static_cast<float>(std::sin(0.5 * a * i));  // half a sine wave over the window
    } else if (t == "hamming") {
      w[i] = static_cast<float>(0.54 - 0.46 * c);
    } else if (t == "povey") {  // like hamming but goes to zero at the edges
      w[i] = static_cast<float>(std::pow(0.5 - 0.5 * c, 0.85));
    } else if (t == "rectangular") {
      w[i] = 1.0f;
    } else {  // blackman
      w[i] = static_cast<float>(opts.blackman_coeff - 0.5 * c +
                                (0.5 - opts.blackman_coeff) * std::cos(2 * a * i));
    }
  }
  return w;
}

void ExtractWindow(std::span<const float> wave, int64_t wave_offset, int64_t num_samples,
                   int64_t frame, const FrameOptions& opts, const std::vector<float>& window_fn,
                   DitherNoise* noise, std::vector<float>* window, float* raw_log_energy) {
  const int32_t size = opts.WindowSize();
  window->assign(size_t(opts.PaddedWindowSize()), 0.0f);
  float* w = window->data();
  const int64_t start = FirstSampleOfFrame(frame, opts);
  for (int32_t i = 0; i < size; ++i) {
    int64_t s = start + i;
    // Reflect about the start and the end: -1 -> 0, -2 -> 1; N -> N-1, N+1 -> N-2.
    while (s < 0 || s >= num_samples) s = s < 0 ? -s - 1 : 2 * num_samples - 1 - s;
    w[i] = wave[static_cast<size_t>(s - wave_offset)];
  }
  if (opts.dither != 0) noise->Add(static_cast<float>(opts.dither), w, size);
  if (opts.remove_dc_offset) {
    const float offset = -KaldiFloatSum({w, size_t(size)}) / static_cast<float>(size);
    for (int32_t i = 0; i < size; ++i) w[i] += offset;
  }
  if (raw_log_energy != nullptr) {
    *raw_log_energy =
        std::log(std::max(KaldiDot(w, w, size_t(size)), std::numeric_limits<float>::epsilon()));
  }
  if (opts.preemph_coeff != 0) {
    const float coeff = static_cast<float>(opts.preemph_coeff);
    for (int32_t i = size - 1; i > 0; --i) w[i] -= coeff * w[i - 1];
    w[0] -= coeff * w[0];
  }
  for (int32_t i = 0; i < size; ++i) w[i] *= window_fn[size_t(i)];
}

}  // namespace gmmscore

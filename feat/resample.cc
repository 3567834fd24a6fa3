#include "feat/resample.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace gmmscore {
namespace {

constexpr int32_t kZeros = 6;  // zero crossings of the sinc on each side of a tap's centre

// The windowed sinc at t seconds from its centre, with the types of Kaldi's FilterFunc: t arrives
// as a float, the cosine and the sine are taken in double, each factor rounds to float.
float Tap(float t, float cutoff) {
  const double two_pi = 2.0 * std::numbers::pi;
  float window = 0.0f;
  if (std::fabs(t) < kZeros / (2.0 * cutoff)) {
    window = static_cast<float>(0.5 * (1 + std::cos(two_pi * cutoff / kZeros * t)));
  }
  const float filter =
      t != 0.0f ? static_cast<float>(std::sin(two_pi * cutoff * t) / (std::numbers::pi * t))
                : 2 * cutoff;
  return filter * window;
}

}  // namespace

absl::StatusOr<std::vector<float>> ResampleWaveform(double from_hz, const std::vector<float>& wave,
                                                    double to_hz) {
  const auto rate_in = static_cast<int64_t>(from_hz), rate_out = static_cast<int64_t>(to_hz);
  if (rate_in <= 0 || rate_out <= 0 || rate_in > 1'000'000 || rate_out > 1'000'000) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot resample from ", from_hz, " Hz to ", to_hz, " Hz"));
  }
  const float cutoff =
      static_cast<float>(0.99 * 0.5 * static_cast<float>(std::min(from_hz, to_hz)));
  // Time in ticks of 1 / lcm(rates): a whole number of ticks per input and per output sample.
  const int64_t base = std::gcd(rate_in, rate_out);
  const int64_t in_per_unit = rate_in / base, out_per_unit = rate_out / base;
  const int64_t ticks = rate_in / base * rate_out;  // lcm
  const int64_t ticks_in = ticks / rate_in, ticks_out = ticks / rate_out;
  // The output samples that fall before the end of the input (all of it, flushed).
  const int64_t length_ticks = static_cast<int64_t>(wave.size()) * ticks_in;
  int64_t num_out = 0;
  if (length_ticks > 0) {
    int64_t last = length_ticks / ticks_out;
    if (last * ticks_out == length_ticks) --last;
    num_out = last + 1;
  }
  // The taps of each output sample within one repeating unit, from the first input sample in
  // the filter's reach.
  const double half_width = kZeros / (2.0 * cutoff);
  std::vector<int64_t> first(static_cast<size_t>(out_per_unit));
  std::vector<std::vector<float>> taps(static_cast<size_t>(out_per_unit));
  for (int64_t i = 0; i < out_per_unit; ++i) {
    const double t_out = static_cast<double>(i) / static_cast<double>(rate_out);
    const auto lo =
        static_cast<int64_t>(std::ceil((t_out - half_width) * static_cast<double>(rate_in)));
    const auto hi =
        static_cast<int64_t>(std::floor((t_out + half_width) * static_cast<double>(rate_in)));
    first[size_t(i)] = lo;
    for (int64_t j = lo; j <= hi; ++j) {
      const double t_in = static_cast<double>(j) / static_cast<double>(rate_in);
      taps[size_t(i)].push_back(Tap(static_cast<float>(t_in - t_out), cutoff) /
                                static_cast<float>(rate_in));
    }
  }
  std::vector<float> out(static_cast<size_t>(num_out));
  for (int64_t n = 0; n < num_out; ++n) {
    const int64_t unit = n / out_per_unit, phase = n - unit * out_per_unit;
    const std::vector<float>& w = taps[size_t(phase)];
    const int64_t start = first[size_t(phase)] + unit * in_per_unit;
    double sum = 0.0;
    for (size_t k = 0; k < w.size(); ++k) {
      const int64_t at = start + static_cast<int64_t>(k);
      if (at >= 0 && at < static_cast<int64_t>(wave.size())) sum += double(w[k]) * wave[size_t(at)];
    }
    out[size_t(n)] = static_cast<float>(sum);
  }
  return out;
}

}  // namespace gmmscore

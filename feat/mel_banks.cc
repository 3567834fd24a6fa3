#include "feat/mel_banks.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "util/kaldi_blas.h"

namespace gmmscore {

float MelScale(float freq) { return 1127.0f * std::log(1.0f + freq / 700.0f); }

float InverseMelScale(float mel) { return 700.0f * (std::exp(mel / 1127.0f) - 1.0f); }

float VtlnWarpFreq(float vtln_low, float vtln_high, float low_freq, float high_freq,
                   float warp_factor, float freq) {
  // Frequencies outside [low_freq, high_freq] are not warped; inside, the warp is linear with
  // slope 1/warp_factor between the cutoffs l and h, and joins the band's ends linearly outside
  // them, so that low_freq and high_freq stay where they are.
  if (freq < low_freq || freq > high_freq) return freq;
  const float l = vtln_low * std::max(1.0f, warp_factor);
  const float h = vtln_high * std::min(1.0f, warp_factor);
  const float scale = 1.0f / warp_factor;
  const float fl = scale * l, fh = scale * h;
  if (freq < l) return low_freq + (fl - low_freq) / (l - low_freq) * (freq - low_freq);
  if (freq < h) return scale * freq;
  return high_freq + (high_freq - fh) / (high_freq - h) * (freq - high_freq);
}

namespace {

float VtlnWarpMelFreq(float vtln_low, float vtln_high, float low_freq, float high_freq,
                      float warp_factor, float mel) {
  return MelScale(
      VtlnWarpFreq(vtln_low, vtln_high, low_freq, high_freq, warp_factor, InverseMelScale(mel)));
}

}  // namespace

absl::StatusOr<MelBanks> MelBanks::Create(const MelBanksOptions& opts, const FrameOptions& frame,
                                          double vtln_warp) {
  if (opts.num_bins < 3 || opts.num_bins > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("--num-mel-bins ", opts.num_bins, " is not in [3, 1024]"));
  }
  const int32_t num_fft_bins = frame.PaddedWindowSize() / 2;
  const float nyquist = 0.5f * static_cast<float>(frame.samp_freq);
  const float low_freq = static_cast<float>(opts.low_freq);
  const float high_freq =
      static_cast<float>(opts.high_freq > 0 ? opts.high_freq : nyquist + opts.high_freq);
  if (!(low_freq >= 0) || low_freq >= nyquist || !(high_freq > 0) || high_freq > nyquist ||
      high_freq <= low_freq) {
    return absl::InvalidArgumentError(absl::StrCat("bad --low-freq ", opts.low_freq,
                                                   " and --high-freq ", opts.high_freq,
                                                   " for a Nyquist frequency of ", nyquist));
  }
  const float fft_bin_width =
      static_cast<float>(frame.samp_freq) / static_cast<float>(frame.PaddedWindowSize());
  const float mel_low = MelScale(low_freq), mel_high = MelScale(high_freq);
  const float mel_delta = (mel_high - mel_low) / static_cast<float>(opts.num_bins + 1);
  const float vtln_low = static_cast<float>(opts.vtln_low);
  const float vtln_high =
      static_cast<float>(opts.vtln_high < 0 ? opts.vtln_high + nyquist : opts.vtln_high);
  const float warp = static_cast<float>(vtln_warp);
  if (!(vtln_warp > 0) || !std::isfinite(vtln_warp)) {
    return absl::InvalidArgumentError(absl::StrCat("bad VTLN warp factor ", vtln_warp));
  }
  if (warp != 1.0f && (vtln_low < 0 || vtln_low <= low_freq || vtln_low >= high_freq ||
                       vtln_high <= 0 || vtln_high >= high_freq || vtln_high <= vtln_low)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad --vtln-low ", opts.vtln_low, " and --vtln-high ", opts.vtln_high,
                     " for --low-freq ", low_freq, " and --high-freq ", high_freq));
  }
  MelBanks banks;
  for (int32_t bin = 0; bin < opts.num_bins; ++bin) {
    const float fbin = static_cast<float>(bin);
    float left = mel_low + fbin * mel_delta, center = mel_low + (fbin + 1) * mel_delta,
          right = mel_low + (fbin + 2) * mel_delta;
    if (warp != 1.0f) {
      left = VtlnWarpMelFreq(vtln_low, vtln_high, low_freq, high_freq, warp, left);
      center = VtlnWarpMelFreq(vtln_low, vtln_high, low_freq, high_freq, warp, center);
      right = VtlnWarpMelFreq(vtln_low, vtln_high, low_freq, high_freq, warp, right);
    }
    Bin b;
    b.first = -1;
    for (int32_t i = 0; i < num_fft_bins; ++i) {
      const float mel = MelScale(fft_bin_width * static_cast<float>(i));
      if (!(mel > left && mel < right)) continue;
      const float weight =
          mel <= center ? (mel - left) / (center - left) : (right - mel) / (right - center);
      if (b.first < 0) b.first = i;
      b.weights.resize(size_t(i - b.first + 1), 0.0f);
      b.weights[i - b.first] = weight;
    }
    if (b.first < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("mel bin ", bin, " covers no FFT bin: --num-mel-bins ", opts.num_bins,
                       " is too large for a ", frame.PaddedWindowSize(), "-point FFT"));
    }
    banks.bins_.push_back(std::move(b));
  }
  return banks;
}

void MelBanks::Compute(const float* power_spectrum, float* out) const {
  for (size_t bin = 0; bin < bins_.size(); ++bin) {
    const Bin& b = bins_[bin];
    out[bin] = KaldiDot(b.weights.data(), power_spectrum + b.first, b.weights.size());
  }
}

}  // namespace gmmscore

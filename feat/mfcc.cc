#include "feat/mfcc.h"

#include <fftw3.h>

#include <cmath>
#include <limits>
#include <mutex>
#include <numbers>
#include <vector>

#include "absl/strings/str_cat.h"
#include "feat/resample.h"
#include "util/kaldi_blas.h"
#include "util/status_macros.h"

namespace gmmscore {

namespace {

// FFTW's planner is not thread-safe; executing a plan on its own buffers is.
std::mutex& FftwPlanner() {
  static std::mutex planner;
  return planner;
}

}  // namespace

struct MfccComputer::Fft {
  explicit Fft(int32_t n) : size(n) {
    std::lock_guard<std::mutex> lock(FftwPlanner());
    in = fftw_alloc_real(n);
    out = fftw_alloc_complex(n / 2 + 1);
    plan = fftw_plan_dft_r2c_1d(n, in, out, FFTW_ESTIMATE);
  }
  ~Fft() {
    std::lock_guard<std::mutex> lock(FftwPlanner());
    fftw_destroy_plan(plan);
    fftw_free(in);
    fftw_free(out);
  }
  int32_t size;
  double* in;
  fftw_complex* out;
  fftw_plan plan;
};

absl::Status MfccOptions::Validate() const {
  GMM_RETURN_IF_ERROR(frame.Validate());
  if (num_ceps < 1 || num_ceps > mel.num_bins) {
    return absl::InvalidArgumentError(
        absl::StrCat("--num-ceps ", num_ceps, " is not in [1, --num-mel-bins ", mel.num_bins, "]"));
  }
  if (!std::isfinite(cepstral_lifter) || !std::isfinite(energy_floor) || energy_floor < 0) {
    return absl::InvalidArgumentError("bad --cepstral-lifter or --energy-floor");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<MfccComputer>> MfccComputer::Create(const MfccOptions& opts,
                                                                   double vtln_warp) {
  GMM_RETURN_IF_ERROR(opts.Validate());
  GMM_ASSIGN_OR_RETURN(MelBanks banks, MelBanks::Create(opts.mel, opts.frame, vtln_warp));
  return std::unique_ptr<MfccComputer>(new MfccComputer(opts, std::move(banks)));
}

MfccComputer::MfccComputer(const MfccOptions& opts, MelBanks banks)
    : opts_(opts), banks_(std::move(banks)), window_fn_(WindowFunction(opts.frame)) {
  const int32_t bins = opts.mel.num_bins, ceps = opts.num_ceps;
  // The first num_ceps rows of the orthonormal DCT-II of size num_bins, as Kaldi's
  // ComputeDctMatrix makes them in float: the scale rounded to float, each value in double.
  dct_.resize(size_t(ceps) * size_t(bins));
  for (int32_t k = 0; k < ceps; ++k) {
    const float norm = static_cast<float>(std::sqrt((k == 0 ? 1.0 : 2.0) / bins));
    for (int32_t n = 0; n < bins; ++n) {
      dct_[size_t(k) * size_t(bins) + size_t(n)] =
          k == 0 ? norm
                 : static_cast<float>(norm * std::cos(std::numbers::pi / bins * (n + 0.5) * k));
    }
  }
  lifter_.assign(size_t(ceps), 1.0f);
  if (opts.cepstral_lifter != 0) {
    const double q = static_cast<float>(opts.cepstral_lifter);
    for (int32_t i = 0; i < ceps; ++i) {
      lifter_[size_t(i)] = static_cast<float>(1.0 + 0.5 * q * std::sin(std::numbers::pi * i / q));
    }
  }
  const int32_t padded = opts.frame.PaddedWindowSize();
  if (padded >= 4 && (padded & (padded - 1)) == 0) {
    split_radix_ = std::make_unique<SplitRadixRealFft>(padded);
  } else {
    fft_ = std::make_unique<Fft>(padded);
  }
  power_.resize(size_t(padded / 2 + 1));
  mel_energies_.resize(size_t(bins));
}

MfccComputer::~MfccComputer() = default;

void MfccComputer::PowerSpectrum() {
  const size_t half = power_.size() - 1;
  if (split_radix_) {
    // Kaldi's ComputePowerSpectrum on the packed transform: DC and Nyquist from data[0] and [1].
    split_radix_->Forward(window_.data());
    power_[0] = window_[0] * window_[0];
    power_[half] = window_[1] * window_[1];
    for (size_t i = 1; i < half; ++i) {
      power_[i] = window_[2 * i] * window_[2 * i] + window_[2 * i + 1] * window_[2 * i + 1];
    }
    return;
  }
  std::copy(window_.begin(), window_.end(), fft_->in);
  fftw_execute(fft_->plan);
  for (size_t i = 0; i < power_.size(); ++i) {
    power_[i] =
        static_cast<float>(fft_->out[i][0] * fft_->out[i][0] + fft_->out[i][1] * fft_->out[i][1]);
  }
}

void MfccComputer::ComputeFrame(std::span<const float> wave, int64_t wave_offset,
                                int64_t num_samples, int64_t frame, DitherNoise* noise,
                                float* out) {
  const bool raw = opts_.use_energy && opts_.raw_energy;
  constexpr float kEpsilon = std::numeric_limits<float>::epsilon();
  float log_energy = 0;
  ExtractWindow(wave, wave_offset, num_samples, frame, opts_.frame, window_fn_, noise, &window_,
                raw ? &log_energy : nullptr);
  if (opts_.use_energy && !opts_.raw_energy) {
    log_energy =
        std::log(std::max(KaldiDot(window_.data(), window_.data(), window_.size()), kEpsilon));
  }
  PowerSpectrum();
  banks_.Compute(power_.data(), mel_energies_.data());
  for (float& e : mel_energies_) e = std::log(std::max(e, kEpsilon));
  const size_t bins = size_t(banks_.num_bins()), ceps = size_t(opts_.num_ceps);
  KaldiMatVec(dct_.data(), ceps, bins, mel_energies_.data(), out);
  for (size_t k = 0; k < ceps; ++k) out[k] *= lifter_[k];
  if (opts_.use_energy) {
    if (opts_.energy_floor > 0) {
      const float floor = std::log(static_cast<float>(opts_.energy_floor));
      if (log_energy < floor) log_energy = floor;
    }
    out[0] = log_energy;
  }
  if (opts_.htk_compat) {
    // HTK puts the energy (or C0) last; C0 loses the DCT's sqrt(1/N) scale's sqrt(2) factor.
    float first = out[0];
    for (size_t i = 0; i + 1 < ceps; ++i) out[i] = out[i + 1];
    if (!opts_.use_energy) first = static_cast<float>(first * std::numbers::sqrt2);
    out[ceps - 1] = first;
  }
}

absl::StatusOr<Matrix> ComputeMfcc(const MfccOptions& opts, std::span<const float> wave,
                                   double samp_freq, double vtln_warp, uint64_t dither_seed) {
  GaussianNoise noise(dither_seed);
  return ComputeMfcc(opts, wave, samp_freq, vtln_warp, noise);
}

absl::StatusOr<Matrix> ComputeMfcc(const MfccOptions& opts, std::span<const float> wave,
                                   double samp_freq, double vtln_warp, DitherNoise& noise) {
  std::vector<float> resampled;
  if (samp_freq != opts.frame.samp_freq) {
    const bool down = opts.frame.samp_freq < samp_freq;
    if (down ? !opts.frame.allow_downsample : !opts.frame.allow_upsample) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Waveform and config sample Frequency mismatch: ", samp_freq, " .vs ",
          opts.frame.samp_freq,
          down ? " (use --allow-downsample=true to allow  downsampling the waveform)."
               : " (use --allow-upsample=true option to allow  upsampling the waveform)."));
    }
    GMM_ASSIGN_OR_RETURN(resampled,
                         ResampleWaveform(samp_freq, std::vector<float>(wave.begin(), wave.end()),
                                          opts.frame.samp_freq));
    wave = resampled;
  }
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MfccComputer> computer,
                       MfccComputer::Create(opts, vtln_warp));
  const int64_t frames = NumFrames(static_cast<int64_t>(wave.size()), opts.frame);
  if (frames * opts.num_ceps > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat(wave.size(), " samples make ", frames,
                                                   " frames, over the limit of one matrix"));
  }
  Matrix out(static_cast<int32_t>(frames), frames == 0 ? 0 : computer->dim());
  for (int64_t f = 0; f < frames; ++f) {
    computer->ComputeFrame(wave, 0, static_cast<int64_t>(wave.size()), f, &noise,
                           out.row(static_cast<int32_t>(f)));
  }
  return out;
}

}  // namespace gmmscore

// MFCCs as Kaldi's compute-mfcc-feats computes them (feat/feature-mfcc.h): window, real FFT,
// power spectrum, mel filter bank, log, DCT-II with orthonormal scaling, cepstral liftering, and
// the log energy in place of C0 where use-energy. Kaldi's option names and defaults, and its
// arithmetic: float throughout, Kaldi's split-radix FFT (feat/split_radix_fft.h) and its BLAS's
// sums (util/kaldi_blas.h), so that with the same samples (no dither) a frame is Kaldi's to the
// last bit. A padded window that is not a power of two (--round-to-power-of-two=false) goes
// through FFTW in double instead, within about 1e-5 of Kaldi's.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "feat/feature_window.h"
#include "feat/mel_banks.h"
#include "feat/split_radix_fft.h"
#include "util/matrix.h"

namespace gmmscore {

struct MfccOptions {
  FrameOptions frame;
  MelBanksOptions mel;
  int32_t num_ceps = 13;
  bool use_energy = true;   // C0 replaced by the log energy
  double energy_floor = 0;  // floor on that energy (absolute, not log); 0: none
  bool raw_energy = true;   // the energy before preemphasis and the window function
  double cepstral_lifter = 22;
  bool htk_compat = false;  // energy or C0 last, as HTK orders them

  absl::Status Validate() const;
};

// Computes one frame's MFCCs; owns its FFT plan and buffers, so one per thread.
class MfccComputer {
 public:
  static absl::StatusOr<std::unique_ptr<MfccComputer>> Create(const MfccOptions& opts,
                                                              double vtln_warp = 1.0);
  ~MfccComputer();
  MfccComputer(const MfccComputer&) = delete;
  MfccComputer& operator=(const MfccComputer&) = delete;

  const MfccOptions& options() const { return opts_; }
  int32_t dim() const { return opts_.num_ceps; }
  // Frame f of a waveform of num_samples known samples (wave[i] is sample wave_offset + i) into
  // out[0, dim()). noise supplies the dither.
  void ComputeFrame(std::span<const float> wave, int64_t wave_offset, int64_t num_samples,
                    int64_t frame, DitherNoise* noise, float* out);

 private:
  MfccComputer(const MfccOptions& opts, MelBanks banks);
  MfccOptions opts_;
  MelBanks banks_;
  // The power spectrum of window_ into power_.
  void PowerSpectrum();

  std::vector<float> window_fn_;
  std::vector<float> dct_;     // num_ceps x num_bins, row-major
  std::vector<float> lifter_;  // num_ceps
  std::vector<float> window_, power_, mel_energies_;
  std::unique_ptr<SplitRadixRealFft> split_radix_;  // for a power-of-two window
  struct Fft;                                       // FFTW, for any other
  std::unique_ptr<Fft> fft_;
};

// The MFCCs of a whole waveform (compute-mfcc-feats on one utterance), resampled to
// opts.frame.samp_freq where allowed. The dither draws from `noise`.
absl::StatusOr<Matrix> ComputeMfcc(const MfccOptions& opts, std::span<const float> wave,
                                   double samp_freq, double vtln_warp, DitherNoise& noise);
// The same with GaussianNoise seeded with dither_seed, so that a run is repeatable.
absl::StatusOr<Matrix> ComputeMfcc(const MfccOptions& opts, std::span<const float> wave,
                                   double samp_freq, double vtln_warp, uint64_t dither_seed);

}  // namespace gmmscore

// Triangular mel filter banks over an FFT's power spectrum, as Kaldi's feat/mel-computations.h
// builds them (mel = 1127 ln(1 + f/700), bins equally spaced in mel between low-freq and
// high-freq, optionally VTLN-warped), in single precision as Kaldi computes the weights, so that
// an FFT bin on a triangle's edge falls on the same side.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "feat/feature_window.h"

namespace gmmscore {

struct MelBanksOptions {
  int32_t num_bins = 23;
  double low_freq = 20;
  double high_freq = 0;     // <= 0: relative to the Nyquist frequency
  double vtln_low = 100;    // VTLN's lower cutoff
  double vtln_high = -500;  // VTLN's upper cutoff; <= 0: relative to the Nyquist frequency
};

float MelScale(float freq);
float InverseMelScale(float mel);
// Kaldi's piecewise-linear VTLN warping of a frequency (feat/mel-computations.cc).
float VtlnWarpFreq(float vtln_low, float vtln_high, float low_freq, float high_freq,
                   float warp_factor, float freq);

class MelBanks {
 public:
  static absl::StatusOr<MelBanks> Create(const MelBanksOptions& opts, const FrameOptions& frame,
                                         double vtln_warp);
  int32_t num_bins() const { return static_cast<int32_t>(bins_.size()); }
  // power_spectrum: PaddedWindowSize()/2 + 1 values; out: num_bins() energies.
  // Each energy a dot product as Kaldi's BLAS sums it (util/kaldi_blas.h).
  void Compute(const float* power_spectrum, float* out) const;

 private:
  struct Bin {
    int32_t first = 0;           // the first FFT bin with a non-zero weight
    std::vector<float> weights;  // from there on
  };
  std::vector<Bin> bins_;
};

}  // namespace gmmscore

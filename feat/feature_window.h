// Cutting a waveform into analysis windows as Kaldi's feat/feature-window.h does: the frame
// options and their defaults, how many frames a waveform gives, where each starts (snip-edges or
// centred with the edges reflected), and the per-window processing (dither, DC removal, the raw
// log energy, preemphasis, the window function).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "util/kaldi_random.h"

namespace gmmscore {

struct FrameOptions {
  double samp_freq = 16000;
  double frame_shift_ms = 10;
  double frame_length_ms = 25;
  double dither = 1.0;  // standard deviation of Gaussian noise added to each sample; 0: none
  double preemph_coeff = 0.97;
  bool remove_dc_offset = true;
  std::string window_type = "povey";  // hamming, hanning, povey, rectangular, sine, blackman
  bool round_to_power_of_two = true;
  double blackman_coeff = 0.42;
  bool snip_edges = true;  // true: only whole windows; false: frames centred every shift
  // Audio at a higher (downsample) or lower (upsample) rate than samp_freq is resampled to it
  // (feat/resample.h) where allowed, refused where not.
  bool allow_downsample = false;
  bool allow_upsample = false;

  // In samples, computed the way Kaldi does (truncating).
  int32_t WindowShift() const { return static_cast<int32_t>(samp_freq * 0.001 * frame_shift_ms); }
  int32_t WindowSize() const { return static_cast<int32_t>(samp_freq * 0.001 * frame_length_ms); }
  // The FFT length: WindowSize() rounded up to a power of two where round_to_power_of_two.
  int32_t PaddedWindowSize() const;

  // Rejects what would make no windows or absurd ones (a window shorter than 2 samples, one
  // longer than 10 s, a negative dither, an unknown window type).
  absl::Status Validate() const;
};

// Gaussian noise for the dither: xoshiro256** and the ziggurat method (Marsaglia and Tsang, "The
// Ziggurat Method for Generating Random Variables", 2000), with 128 layers and the index and the
// value taken from separate bits of each draw as Doornik advises ("An Improved Ziggurat Method to
// Generate Normal Random Samples", 2005). About 99% of the values cost one draw, a multiply and
// a comparison, no logarithm; the dither was most of the front end's time with Marsaglia's polar
// method (3.7 us a 400-sample frame). Repeatable: the same seed gives the same noise.
// Where the dither's noise comes from: each call adds noise of standard deviation sigma to the
// samples of one frame (each draw rounded to float, times sigma in float, as Kaldi scales them).
class DitherNoise {
 public:
  virtual ~DitherNoise() = default;
  virtual void Add(float sigma, float* values, int32_t n) = 0;
};

class GaussianNoise final : public DitherNoise {
 public:
  explicit GaussianNoise(uint64_t seed);
  void Add(float sigma, float* values, int32_t n) override;
  // One standard normal value.
  double Normal();

 private:
  // One standard normal value from the ziggurat table (feature_window.cc), looked up once by
  // the caller.
  template <typename Table>
  double Draw(const Table& table);
  uint64_t Next();
  double Uniform() { return (static_cast<double>(Next() >> 11) + 0.5) * 0x1.0p-53; }  // (0, 1)
  uint64_t s_[4];
};

// Kaldi's own dither draws (feat/feature-window.cc, Dither): for each frame a generator seeded
// with the process's next rand() plus 27437, and from it (rand_r) a RandGauss per sample, two
// uniform draws each. A Kaldi tool draws one rand() sequence over all the utterances it reads, in
// order, so one KaldiDither serves a whole table; the features then have Kaldi's bits with the
// dither on too (compute-mfcc-feats' default). Several times slower than GaussianNoise: the
// daemon's streams use that.
class KaldiDither final : public DitherNoise {
 public:
  void Add(float sigma, float* values, int32_t n) override;

 private:
  KaldiRandom process_;  // rand()'s sequence, as never seeded
};

// The number of frames num_samples give; with snip_edges false, also the frames whose windows
// run past the end (what Kaldi computes once the input is finished).
int64_t NumFrames(int64_t num_samples, const FrameOptions& opts);

// The first sample of frame f's window; negative for the first frames when snip_edges is false.
int64_t FirstSampleOfFrame(int64_t frame, const FrameOptions& opts);

// The window function, WindowSize() values, computed in double and rounded to float as Kaldi's
// FeatureWindowFunction stores them.
std::vector<float> WindowFunction(const FrameOptions& opts);

// Fills window[0, PaddedWindowSize()) with frame f of a waveform whose first num_samples samples
// are known, wave[i] being sample wave_offset + i (a streaming caller keeps only a recent part).
// Samples before 0 or at and past num_samples are reflected as Kaldi reflects them; the padding
// is zero. Then dither (from noise), DC removal, the raw log energy (into *raw_log_energy when not
// null), preemphasis and the window function, in Kaldi's order and in float with Kaldi's
// rounding (the mean and the energy as its BLAS sums them, util/kaldi_blas.h).
void ExtractWindow(std::span<const float> wave, int64_t wave_offset, int64_t num_samples,
                   int64_t frame, const FrameOptions& opts, const std::vector<float>& window_fn,
                   DitherNoise* noise, std::vector<float>* window, float* raw_log_energy);

}  // namespace gmmscore

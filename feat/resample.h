// Resampling a waveform to another sample rate, as Kaldi's front end does where a recording's rate
// differs from --sample-frequency and --allow-downsample or --allow-upsample allows it
// (ResampleWaveform in Kaldi's feat/resample.h): a windowed-sinc low-pass filter with its cutoff at
// 0.99 of the lower Nyquist frequency and 6 zeros each side, a raised-cosine (Hann) window over
// them, the whole waveform at once (samples outside it are 0). The filter's taps are Kaldi's, in
// float; each output sample is their dot product with the input, summed in double.
//
// Rates are whole numbers of Hz (Kaldi truncates them); the output has as many samples as fit in
// the input's duration at the new rate.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace gmmscore {

absl::StatusOr<std::vector<float>> ResampleWaveform(double from_hz, const std::vector<float>& wave,
                                                    double to_hz);

}  // namespace gmmscore

// Test audio: 16-bit PCM WAVE bytes built by hand from the RIFF layout, and random waveforms.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace gmmscore::testing {

inline void PutLe(std::string* out, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// channels[c][i] rounded to int16. riff_size and data_size override the header's sizes (as a
// writer to a pipe leaves them).
inline std::string WaveBytes(const std::vector<std::vector<float>>& channels, int rate,
                             int64_t riff_size = -1, int64_t data_size = -1) {
  const uint32_t n = static_cast<uint32_t>(channels[0].size());
  const uint32_t c = static_cast<uint32_t>(channels.size());
  const uint32_t data = n * c * 2;
  std::string out = "RIFF";
  PutLe(&out, riff_size >= 0 ? static_cast<uint32_t>(riff_size) : 36 + data, 4);
  out += "WAVEfmt ";
  PutLe(&out, 16, 4);
  PutLe(&out, 1, 2);  // PCM
  PutLe(&out, c, 2);
  PutLe(&out, static_cast<uint32_t>(rate), 4);
  PutLe(&out, static_cast<uint32_t>(rate) * c * 2, 4);
  PutLe(&out, c * 2, 2);
  PutLe(&out, 16, 2);
  out += "data";
  PutLe(&out, data_size >= 0 ? static_cast<uint32_t>(data_size) : data, 4);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t ch = 0; ch < c; ++ch) {
      const long v = std::lround(channels[ch][i]);
      PutLe(&out, static_cast<uint16_t>(static_cast<int16_t>(std::clamp(v, -32768L, 32767L))), 2);
    }
  }
  return out;
}

// Speech-like test audio: a few harmonics that glide, plus noise, on the 16-bit integer scale
// (already integers, so a WAVE round trip keeps them exactly).
inline std::vector<float> RandomWave(int64_t samples, uint64_t seed, double rate = 16000) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 300.0);
  std::vector<float> wave(static_cast<size_t>(samples));
  for (int64_t i = 0; i < samples; ++i) {
    const double t = static_cast<double>(i) / rate;
    double v = noise(rng);
    for (int h = 1; h <= 4; ++h) v += 2000.0 / h * std::sin(2 * M_PI * h * (140 + 40 * t) * t);
    wave[static_cast<size_t>(i)] = static_cast<float>(std::round(v));
  }
  return wave;
}

}  // namespace gmmscore::testing

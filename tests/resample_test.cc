// feat/resample: Kaldi's windowed-sinc resampling, against tones sampled at the new rate, a
// float64 evaluation of the same filter, the lengths Kaldi gives, and through compute-mfcc-feats'
// --allow-downsample / --allow-upsample.
#include "feat/resample.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace gmmscore::testing {
namespace {

std::vector<float> Tone(double hz, double rate, int64_t samples) {
  std::vector<float> out(static_cast<size_t>(samples));
  for (int64_t n = 0; n < samples; ++n) {
    out[size_t(n)] =
        static_cast<float>(1000.0 * std::sin(2 * std::numbers::pi * hz * double(n) / rate));
  }
  return out;
}

// A tone below both Nyquist frequencies comes out as that tone sampled at the new rate (away
// from the ends, where the filter reaches past the waveform), down and up, at rates with small
// and large common units.
TEST(Resample, ATonePassesAtTheNewRate) {
  struct Case {
    double from, to, hz;
  };
  for (const Case c : {Case{16000, 8000, 1000}, Case{8000, 16000, 700}, Case{44100, 16000, 440},
                       Case{16000, 22050, 3000}}) {
    const std::vector<float> in = Tone(c.hz, c.from, static_cast<int64_t>(c.from));
    auto out = ResampleWaveform(c.from, in, c.to);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), static_cast<size_t>(c.to)) << c.from << " -> " << c.to;
    const std::vector<float> want = Tone(c.hz, c.to, static_cast<int64_t>(c.to));
    const auto margin = static_cast<size_t>(c.to / 100);  // 10 ms at each end
    for (size_t n = margin; n + margin < out->size(); ++n) {
      // The passband of a 6-zero windowed sinc ripples by about 1% near the cutoff.
      ASSERT_NEAR((*out)[n], want[n], 15.0) << c.from << " -> " << c.to << " sample " << n;
    }
  }
}

// Above the new Nyquist frequency a tone is filtered out.
TEST(Resample, ATooHighToneIsRemoved) {
  const std::vector<float> in = Tone(6000, 16000, 16000);
  auto out = ResampleWaveform(16000, in, 8000);
  ASSERT_TRUE(out.ok());
  double energy = 0.0;
  for (size_t n = 80; n + 80 < out->size(); ++n) energy += double((*out)[n]) * (*out)[n];
  EXPECT_LT(std::sqrt(energy / double(out->size() - 160)), 10.0);  // the tone's RMS is 707
}

// Each output sample is the filter's dot product with the input: here against the filter in
// float64 (Kaldi's formula: Hann-windowed sinc, cutoff 0.99 of the lower Nyquist, 6 zeros), on
// random samples with one sample, odd lengths and a sample at the very end.
TEST(Resample, SamplesAreTheFilterAppliedToTheInput) {
  for (const int64_t length : {1, 2, 3, 17, 441}) {
    std::vector<float> in(static_cast<size_t>(length));
    for (int64_t n = 0; n < length; ++n) in[size_t(n)] = float((n * 7919) % 201) - 100.0f;
    const double from = 44100, to = 16000, cutoff = 0.99 * 0.5 * to, zeros = 6;
    auto out = ResampleWaveform(from, in, to);
    ASSERT_TRUE(out.ok());
    // Kaldi's count: the output samples that fall in [0, length / from).
    int64_t expected = 0;
    while (static_cast<double>(expected) * 44100 < static_cast<double>(length) * 16000) {
      ++expected;
    }
    ASSERT_EQ(out->size(), size_t(expected)) << length;
    for (size_t m = 0; m < out->size(); ++m) {
      const double t_out = double(m) / to;
      double want = 0.0, scale = 0.0;
      for (int64_t n = 0; n < length; ++n) {
        const double t = double(n) / from - t_out;
        if (std::abs(t) >= zeros / (2 * cutoff)) continue;
        const double window = 0.5 * (1 + std::cos(2 * std::numbers::pi * cutoff / zeros * t));
        const double sinc =
            t == 0 ? 2 * cutoff
                   : std::sin(2 * std::numbers::pi * cutoff * t) / (std::numbers::pi * t);
        want += window * sinc / from * in[size_t(n)];
        scale += std::abs(window * sinc / from * in[size_t(n)]);
      }
      EXPECT_NEAR((*out)[m], want, 1e-5 * (1.0 + scale)) << length << " " << m;
    }
  }
  EXPECT_TRUE(ResampleWaveform(16000, {}, 8000)->empty());
  EXPECT_FALSE(ResampleWaveform(0, {1.0f}, 8000).ok());
}

// compute-mfcc-feats: a 16 kHz recording with --sample-frequency=8000 fails for that utterance
// unless --allow-downsample=true, and then has the frames of its duration at 8 kHz.
TEST(Resample, ComputeMfccFeatsResamplesWhereAllowed) {
  TempDir dir;
  const std::string bin = dir.file("bin"), log = dir.file("log");
  ASSERT_EQ(RunCommand(std::string(GMMSCORE_CLI) + " kaldi-links " + bin + " >/dev/null", log), 0);
  const std::string wav = DataPath("kaldi-tri-wav/fslt-010.wav");
  const std::string scp = dir.file("wav.scp");
  WriteFile(scp, "fslt-010 " + wav + "\n");
  EXPECT_EQ(RunCommand(bin + "/compute-mfcc-feats --sample-frequency=8000 scp:" + scp +
                           " ark:" + dir.file("no.ark"),
                       log),
            1);
  EXPECT_NE(ReadFile(log).find("Waveform and config sample Frequency mismatch: 16000 .vs 8000 "
                               "(use --allow-downsample=true"),
            std::string::npos)
      << ReadFile(log);
  ASSERT_EQ(RunCommand(bin +
                           "/compute-mfcc-feats --sample-frequency=8000 --allow-downsample=true "
                           "--dither=0 scp:" +
                           scp + " ark:" + dir.file("8k.ark"),
                       log),
            0)
      << ReadFile(log);
  ASSERT_EQ(
      RunCommand(bin + "/compute-mfcc-feats --dither=0 scp:" + scp + " ark:" + dir.file("16k.ark"),
                 log),
      0)
      << ReadFile(log);
  const auto at8k = ReadTable("ark:" + dir.file("8k.ark")),
             at16k = ReadTable("ark:" + dir.file("16k.ark"));
  ASSERT_EQ(at8k.size(), 1u);
  // The same 25 ms windows every 10 ms: the same number of frames at either rate.
  EXPECT_NEAR(at8k.begin()->second.rows, at16k.begin()->second.rows, 1);
}

}  // namespace
}  // namespace gmmscore::testing

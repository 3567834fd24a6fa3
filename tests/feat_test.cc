// The front end (feat/) against a direct float64 reference (DFT by its definition, mel triangles
// and DCT from their formulas), against Kaldi's own features of the kaldi-mono recordings, and
// streaming against offline, bit for bit; CMVN, deltas, WAVE reading and config files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <random>
#include <sstream>

#include "feat/compute_features.h"
#include "feat/deltas.h"
#include "feat/feature_window.h"
#include "feat/front_end_options.h"
#include "feat/mfcc.h"
#include "feat/online_front_end.h"
#include "feat/split_radix_fft.h"
#include "feat/wave_reader.h"
#include "formats/double_matrix_table.h"
#include "formats/kaldi_compressed_matrix.h"
#include "formats/kaldi_tables.h"
#include "tests/test_util.h"
#include "tests/wave_test_util.h"
#include "util/kaldi_blas.h"

namespace gmmscore::testing {
namespace {

double Mel(double f) { return 1127.0 * std::log(1.0 + f / 700.0); }

// MFCCs of one frame computed from the definitions, in double, with a direct DFT.
std::vector<double> ReferenceFrame(const MfccOptions& o, const std::vector<float>& wave,
                                   int64_t frame) {
  const FrameOptions& f = o.frame;
  const int64_t n = static_cast<int64_t>(wave.size());
  const int32_t size = f.WindowSize(), padded = f.PaddedWindowSize();
  const int64_t shift = f.WindowShift();
  const int64_t start = f.snip_edges ? frame * shift : frame * shift + shift / 2 - size / 2;
  std::vector<double> w(padded, 0.0);
  for (int32_t i = 0; i < size; ++i) {
    int64_t s = start + i;
    while (s < 0 || s >= n) s = s < 0 ? -s - 1 : 2 * n - 1 - s;
    w[i] = wave[s];
  }
  double mean = 0;
  for (int32_t i = 0; i < size; ++i) mean += w[i] / size;
  if (f.remove_dc_offset) {
    for (int32_t i = 0; i < size; ++i) w[i] -= mean;
  }
  auto energy = [&] {
    double e = 0;
    for (int32_t i = 0; i < size; ++i) e += w[i] * w[i];
    return std::log(std::max(e, 1.1920928955078125e-07));
  };
  double log_energy = o.raw_energy ? energy() : 0;
  for (int32_t i = size - 1; i > 0; --i) w[i] -= f.preemph_coeff * w[i - 1];
  w[0] -= f.preemph_coeff * w[0];
  for (int32_t i = 0; i < size; ++i) {
    const double a = 2 * M_PI * i / (size - 1);
    double win = 1;
    if (f.window_type == "povey") win = std::pow(0.5 - 0.5 * std::cos(a), 0.85);
    if (f.window_type == "hamming") win = 0.54 - 0.46 * std::cos(a);
    if (f.window_type == "hanning") win = 0.5 - 0.5 * std::cos(a);
    if (f.window_type == "blackman") {
      win = f.blackman_coeff - 0.5 * std::cos(a) + (0.5 - f.blackman_coeff) * std::cos(2 * a);
    }
    w[i] *= win;
  }
  if (!o.raw_energy) log_energy = energy();
  const int32_t bins = o.mel.num_bins;
  std::vector<double> power(padded / 2 + 1);
  for (int32_t k = 0; k <= padded / 2; ++k) {
    double re = 0, im = 0;
    for (int32_t i = 0; i < padded; ++i) {
      re += w[i] * std::cos(2 * M_PI * k * i / padded);
      im -= w[i] * std::sin(2 * M_PI * k * i / padded);
    }
    power[k] = re * re + im * im;
  }
  const double nyquist = f.samp_freq / 2;
  const double high = o.mel.high_freq > 0 ? o.mel.high_freq : nyquist + o.mel.high_freq;
  const double lo = Mel(o.mel.low_freq), delta = (Mel(high) - lo) / (bins + 1);
  std::vector<double> logmel(bins);
  for (int32_t b = 0; b < bins; ++b) {
    const double l = lo + b * delta, c = l + delta, r = l + 2 * delta;
    double e = 0;
    for (int32_t k = 0; k < padded / 2; ++k) {
      const double m = Mel(f.samp_freq * k / padded);
      if (m > l && m < r) e += power[k] * (m <= c ? (m - l) / (c - l) : (r - m) / (r - c));
    }
    logmel[b] = std::log(std::max(e, 1.1920928955078125e-07));
  }
  std::vector<double> out(o.num_ceps);
  for (int32_t k = 0; k < o.num_ceps; ++k) {
    double s = 0;
    for (int32_t b = 0; b < bins; ++b) s += logmel[b] * std::cos(M_PI / bins * (b + 0.5) * k);
    s *= std::sqrt((k == 0 ? 1.0 : 2.0) / bins);
    if (o.cepstral_lifter != 0) {
      s *= 1 + 0.5 * o.cepstral_lifter * std::sin(M_PI * k / o.cepstral_lifter);
    }
    out[k] = s;
  }
  if (o.use_energy) out[0] = log_energy;
  if (o.htk_compat) {
    double first = out[0] * (o.use_energy ? 1.0 : std::sqrt(2.0));
    out.erase(out.begin());
    out.push_back(first);
  }
  return out;
}

struct Case {
  const char* name;
  MfccOptions opts;
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  MfccOptions defaults;
  defaults.frame.dither = 0;
  cases.push_back({"kaldi defaults", defaults});
  MfccOptions odd = defaults;  // a 400-point FFT, centred frames, HTK order, no raw energy
  odd.frame.round_to_power_of_two = false;
  odd.frame.snip_edges = false;
  odd.frame.window_type = "hamming";
  odd.raw_energy = false;
  odd.htk_compat = true;
  odd.num_ceps = 17;
  odd.mel.num_bins = 27;
  cases.push_back({"odd sizes", odd});
  MfccOptions narrow = defaults;  // 8 kHz, 20 ms frames, no preemphasis or lifter, C0 kept
  narrow.frame.samp_freq = 8000;
  narrow.frame.frame_length_ms = 20;
  narrow.frame.preemph_coeff = 0;
  narrow.frame.window_type = "blackman";
  narrow.frame.remove_dc_offset = false;
  narrow.use_energy = false;
  narrow.cepstral_lifter = 0;
  narrow.mel.low_freq = 64;
  narrow.mel.high_freq = -200;
  narrow.mel.num_bins = 15;
  cases.push_back({"narrowband", narrow});
  return cases;
}

// The dither's generator against the standard normal: moments, the share past 1, 2, the ziggurat's
// tail start and 4, and a chi-square over 80 bins of [-4, 4] (80 cells: mean 79, sd 12.6;
// 79 + 6 sd is the bound, and the seed is fixed, so a pass is a pass for good). A wrong layer
// table, tail or wedge shows in the bins.
TEST(GaussianNoiseTest, IsAStandardNormalAndRepeatable) {
  constexpr int64_t kDraws = 4'000'000;
  constexpr int kBins = 80;
  GaussianNoise noise(2024);
  double sum = 0, sum2 = 0, sum3 = 0, sum4 = 0;
  const double thresholds[] = {1.0, 2.0, 3.442619855899, 4.0};
  int64_t beyond[4] = {0, 0, 0, 0};
  std::vector<int64_t> bins(kBins, 0);
  for (int64_t i = 0; i < kDraws; ++i) {
    const double x = noise.Normal();
    sum += x;
    sum2 += x * x;
    sum3 += x * x * x;
    sum4 += x * x * x * x;
    for (int k = 0; k < 4; ++k) beyond[k] += std::abs(x) > thresholds[k] ? 1 : 0;
    if (x >= -4.0 && x < 4.0) ++bins[size_t((x + 4.0) / 8.0 * kBins)];
  }
  const double n = double(kDraws);
  const double mean = sum / n, var = sum2 / n - mean * mean;
  EXPECT_NEAR(mean, 0.0, 5.0 / std::sqrt(n));
  EXPECT_NEAR(var, 1.0, 5.0 * std::sqrt(2.0 / n));
  EXPECT_NEAR(sum3 / n, 0.0, 5.0 * std::sqrt(15.0 / n));  // skewness (var 15 / n)
  EXPECT_NEAR(sum4 / n, 3.0, 5.0 * std::sqrt(96.0 / n));  // kurtosis (var 96 / n)
  for (int k = 0; k < 4; ++k) {
    const double p = std::erfc(thresholds[k] / std::sqrt(2.0));
    EXPECT_NEAR(double(beyond[k]) / n, p, 5.0 * std::sqrt(p * (1 - p) / n)) << thresholds[k];
  }
  double chi2 = 0;
  for (int b = 0; b < kBins; ++b) {
    const double lo = -4.0 + 8.0 * b / kBins, hi = lo + 8.0 / kBins;
    const double expected =
        n * 0.5 * (std::erfc(lo / std::sqrt(2.0)) - std::erfc(hi / std::sqrt(2.0)));
    chi2 += (double(bins[size_t(b)]) - expected) * (double(bins[size_t(b)]) - expected) / expected;
  }
  EXPECT_LT(chi2, 79.0 + 6.0 * std::sqrt(2.0 * 79.0));

  // The same seed gives the same noise; Add adds sigma times the same values, in float.
  GaussianNoise a(77), b(77);
  std::vector<float> values(401, 1.0f);
  a.Add(0.5f, values.data(), int32_t(values.size()));
  for (float v : values) ASSERT_EQ(v, 1.0f + static_cast<float>(b.Normal()) * 0.5f);
}

TEST(MfccTest, MatchesTheDefinitionsInDouble) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    const std::vector<float> wave = RandomWave(3301, 11, c.opts.frame.samp_freq);
    auto mfcc = ComputeMfcc(c.opts, wave, c.opts.frame.samp_freq, 1.0, 0);
    ASSERT_TRUE(mfcc.ok()) << mfcc.status();
    ASSERT_EQ(mfcc->rows, NumFrames(3301, c.opts.frame));
    ASSERT_GT(mfcc->rows, 10);
    for (int32_t t = 0; t < mfcc->rows; ++t) {
      const std::vector<double> ref = ReferenceFrame(c.opts, wave, t);
      for (int32_t k = 0; k < mfcc->cols; ++k) {
        EXPECT_NEAR(mfcc->at(t, k), ref[k], 1e-4 + 1e-5 * std::abs(ref[k]))
            << "frame " << t << " coefficient " << k;
      }
    }
  }
}

// Kaldi's own MFCCs of two of the kit's recordings (compute-mfcc-feats --dither=0
// --use-energy=false, tests/data/kaldi-tri-wav): the same bits, every value. Kaldi computes in
// float with its split-radix FFT and its BLAS's sums; anything else differs in the last bits.
TEST(MfccTest, KaldisBitsOnTheKitsRecordings) {
  const std::map<std::string, Matrix> kaldi =
      ReadTable("ark:" + DataPath("kaldi-tri-wav/mfcc_dither0.ark"));
  ASSERT_EQ(kaldi.size(), 2u);
  MfccOptions opts;
  opts.frame.dither = 0;
  opts.use_energy = false;
  for (const auto& [key, want] : kaldi) {
    std::ifstream in(DataPath("kaldi-tri-wav/" + key + ".wav"), std::ios::binary);
    auto wave = ReadWave(in, key);
    ASSERT_TRUE(wave.ok()) << wave.status();
    auto mfcc = ComputeMfcc(opts, wave->channels[0], wave->sample_rate, 1.0, 0);
    ASSERT_TRUE(mfcc.ok()) << mfcc.status();
    ASSERT_EQ(mfcc->rows, want.rows) << key;
    ASSERT_EQ(mfcc->cols, want.cols) << key;
    int64_t differ = 0;
    for (size_t i = 0; i < want.data.size(); ++i) {
      differ += std::memcmp(&mfcc->data[i], &want.data[i], sizeof(float)) != 0;
    }
    EXPECT_EQ(differ, 0) << key << ": values that are not Kaldi's bits, of " << want.data.size();
  }
}

// With the dither on (Kaldi's default), compute-mfcc-feats draws Kaldi's own numbers
// (KaldiDither: rand()'s sequence, one per frame, seeding rand_r's per-sample draws). The kit's
// egbf2-001 was the first utterance of its first make_mfcc.sh job, so a fresh KaldiDither draws
// what that job drew: compressed as copy-feats --compress=true compresses, Kaldi's archive entry
// byte for byte.
TEST(MfccTest, KaldisDitherDrawsGiveKaldisDitheredFeatures) {
  std::ifstream in(DataPath("kaldi-tri-wav/egbf2-001.wav"), std::ios::binary);
  auto wave = ReadWave(in, "egbf2-001");
  ASSERT_TRUE(wave.ok()) << wave.status();
  MfccOptions opts;
  opts.use_energy = false;  // the kit's conf/mfcc.conf; dither 1, Kaldi's default
  KaldiDither dither;
  auto mfcc = ComputeMfcc(opts, wave->channels[0], wave->sample_rate, 1.0, dither);
  ASSERT_TRUE(mfcc.ok()) << mfcc.status();
  std::ostringstream out;
  out << "egbf2-001 " << std::string("\0B", 2);  // an archive entry: key, binary marker
  ASSERT_TRUE(WriteCompressedMatrix(*mfcc, CompressionMethod::kAutomatic, out).ok());
  EXPECT_TRUE(out.str() == ReadFile(DataPath("kaldi-tri-wav/feats_dither1.ark")))
      << "not Kaldi's bytes";
  // Seeded noise (the daemon's) is another sequence.
  auto seeded = ComputeMfcc(opts, wave->channels[0], wave->sample_rate, 1.0, uint64_t{1});
  ASSERT_TRUE(seeded.ok());
  EXPECT_NE(seeded->data, mfcc->data);
}

// The kernels of util/kaldi_blas.h compiled for hardware FMA and portably (the C library's fma)
// give the same bits, on values of every magnitude and lengths around the kernels' blocks.
TEST(KaldiBlasTest, HardwareAndPortableFusedKernelsAgreeBitForBit) {
#ifndef GMMSCORE_KALDI_BLAS_HARDWARE_FMA
  GTEST_SKIP() << "no hardware FMA kernels on this platform";
#else
  if (!HasHardwareFma()) GTEST_SKIP() << "this processor has no FMA instructions";
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> exponent(-20.0f, 20.0f);
  auto value = [&] { return std::ldexp(rng() % 2 ? 1.0f : -1.0f, int(exponent(rng))) * 1.37f; };
  for (const size_t n : {size_t{0}, size_t{1}, size_t{31}, size_t{32}, size_t{33}, size_t{63},
                         size_t{64}, size_t{400}, size_t{512}}) {
    SCOPED_TRACE(n);
    std::vector<float> x(n), y(n);
    for (size_t i = 0; i < n; ++i) x[i] = value(), y[i] = value();
    const float a = kaldi_blas_fma::Dot(x.data(), y.data(), n);
    const float b = kaldi_blas_portable::Dot(x.data(), y.data(), n);
    EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0) << a << " vs " << b;
    std::vector<float> ya = y, yb = y;
    kaldi_blas_fma::Axpy(0.01f, x.data(), ya.data(), n);
    kaldi_blas_portable::Axpy(0.01f, x.data(), yb.data(), n);
    EXPECT_EQ(ya, yb);
  }
  for (const size_t rows : {size_t{1}, size_t{2}, size_t{3}, size_t{13}}) {
    for (const size_t cols : {size_t{1}, size_t{4}, size_t{12}, size_t{23}, size_t{40}}) {
      std::vector<float> m(rows * cols), x(cols), ya(rows), yb(rows);
      for (float& v : m) v = value();
      for (float& v : x) v = value();
      kaldi_blas_fma::MatVec(m.data(), rows, cols, x.data(), ya.data());
      kaldi_blas_portable::MatVec(m.data(), rows, cols, x.data(), yb.data());
      EXPECT_EQ(ya, yb) << rows << " x " << cols;
    }
  }
#endif
}

// The split-radix FFT against the DFT's definition in double, for every power of two up to 4096
// and inputs with a wide range (a loud sample among quiet ones).
TEST(SplitRadixFftTest, EqualsTheDftInDoubleWithinFloatRounding) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  for (int32_t n = 4; n <= 4096; n *= 2) {
    SCOPED_TRACE(n);
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = normal(rng);
    x[size_t(n / 3)] = 3000.0f;
    std::vector<float> data = x;
    SplitRadixRealFft fft(n);
    fft.Forward(data.data());
    double scale = 0;
    for (float v : x) scale += double(v) * v;
    scale = std::sqrt(scale);
    for (int32_t k = 0; k <= n / 2; ++k) {
      double re = 0, im = 0;
      for (int32_t j = 0; j < n; ++j) {
        const double angle = -2 * std::numbers::pi * double(j) * k / n;
        re += x[size_t(j)] * std::cos(angle);
        im += x[size_t(j)] * std::sin(angle);
      }
      // Packed as Kaldi packs it: DC and Nyquist (real) first, then bin k at 2k, 2k + 1.
      const double got_re = k == 0 ? data[0] : (k == n / 2 ? data[1] : data[size_t(2 * k)]);
      const double got_im = (k == 0 || k == n / 2) ? 0.0 : data[size_t(2 * k + 1)];
      const double tolerance = 2e-6 * scale * std::log2(double(n));
      EXPECT_NEAR(got_re, re, tolerance) << "bin " << k;
      EXPECT_NEAR(got_im, im, tolerance) << "bin " << k;
    }
  }
}

TEST(MfccTest, OneFrameAndNoFrames) {
  MfccOptions o;
  o.frame.dither = 0;
  const std::vector<float> wave = RandomWave(400, 3);
  auto one = ComputeMfcc(o, wave, 16000, 1.0, 0);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->rows, 1);
  auto none = ComputeMfcc(o, std::span<const float>(wave).first(399), 16000, 1.0, 0);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->rows, 0);
  // Silence: every log is floored, nothing is infinite or NaN.
  std::vector<float> zeros(1600, 0.0f);
  auto quiet = ComputeMfcc(o, zeros, 16000, 1.0, 0);
  ASSERT_TRUE(quiet.ok());
  for (float v : quiet->data) EXPECT_TRUE(std::isfinite(v));
}

TEST(MfccTest, FrameCountsAndOffsetsAreKaldis) {
  FrameOptions f;
  EXPECT_EQ(f.WindowSize(), 400);
  EXPECT_EQ(f.WindowShift(), 160);
  EXPECT_EQ(f.PaddedWindowSize(), 512);
  EXPECT_EQ(NumFrames(16000, f), 98);
  EXPECT_EQ(FirstSampleOfFrame(3, f), 480);
  f.snip_edges = false;
  EXPECT_EQ(NumFrames(16000, f), 100);
  EXPECT_EQ(NumFrames(16079, f), 100);
  EXPECT_EQ(NumFrames(16080, f), 101);
  EXPECT_EQ(FirstSampleOfFrame(0, f), -120);
}

TEST(MfccTest, RejectsOptionsThatMakeNoSense) {
  MfccOptions o;
  o.num_ceps = 30;  // more than the 23 mel bins
  EXPECT_FALSE(MfccComputer::Create(o).ok());
  o = MfccOptions();
  o.frame.frame_length_ms = 0.01;
  EXPECT_FALSE(MfccComputer::Create(o).ok());
  o = MfccOptions();
  o.mel.high_freq = 9000;  // over Nyquist
  EXPECT_FALSE(MfccComputer::Create(o).ok());
  o = MfccOptions();
  o.mel.num_bins = 200;  // more triangles than a 512-point FFT has bins for
  EXPECT_FALSE(MfccComputer::Create(o).ok());
  o = MfccOptions();
  o.frame.frame_length_ms = 6.6e150;  // found by fuzzing: once converted to int32 unchecked
  EXPECT_FALSE(MfccComputer::Create(o).ok());
  o = MfccOptions();
  o.frame.frame_shift_ms = 1e12;
  EXPECT_FALSE(MfccComputer::Create(o).ok());
  o = MfccOptions();
  o.frame.window_type = "triangle";
  EXPECT_FALSE(MfccComputer::Create(o).ok());
  o = MfccOptions();
  auto wrong_rate = ComputeMfcc(o, RandomWave(1000, 1), 8000, 1.0, 0);
  EXPECT_FALSE(wrong_rate.ok());
}

TEST(MfccTest, VtlnWarpMovesTheBankAndKeepsItsEnds) {
  EXPECT_FLOAT_EQ(VtlnWarpFreq(100, 7500, 20, 8000, 1.1f, 20), 20);
  EXPECT_FLOAT_EQ(VtlnWarpFreq(100, 7500, 20, 8000, 1.1f, 8000), 8000);
  EXPECT_NEAR(VtlnWarpFreq(100, 7500, 20, 8000, 1.1f, 1000), 1000 / 1.1, 1e-3);
  MfccOptions o;
  o.frame.dither = 0;
  const std::vector<float> wave = RandomWave(4000, 5);
  auto plain = ComputeMfcc(o, wave, 16000, 1.0, 0);
  auto warped = ComputeMfcc(o, wave, 16000, 0.9, 0);
  ASSERT_TRUE(plain.ok() && warped.ok());
  EXPECT_NE(plain->data, warped->data);
}

// Kaldi's own features of the recordings tests/data/kaldi-mono was made from (README there):
// compute-mfcc-feats --dither=0 --use-energy=false, apply-cmvn --norm-vars=false, add-deltas.
TEST(FrontEndTest, ReproducesKaldisFeatures) {
  const std::string root = "/usr/share/pocketsphinx/test/data/";
  const std::map<std::string, std::string> recordings = {
      {"cards-001", "cards/001.wav"},
      {"cards-003", "cards/003.wav"},
      {"lib-0880", "librivox/sense_and_sensibility_01_austen_64kb-0880.wav"}};
  if (!std::filesystem::exists(root + recordings.begin()->second)) {
    GTEST_SKIP() << "Debian's pocketsphinx-testdata is not installed (" << root << ")";
  }
  const std::map<std::string, Matrix> kaldi = ReadTable("ark:" + DataPath("kaldi-mono/feats.ark"));
  FrontEndOptions opts;
  opts.mfcc.frame.dither = 0;
  opts.mfcc.use_energy = false;
  opts.cmvn = CmvnMode::kUtterance;
  opts.deltas.order = 2;
  for (const auto& [key, file] : recordings) {
    std::ifstream in(root + file, std::ios::binary);
    auto wave = ReadWave(in, file);
    ASSERT_TRUE(wave.ok()) << wave.status();
    auto base = ComputeBaseFeatures(opts, wave->channels[0], wave->sample_rate, 1.0, key);
    ASSERT_TRUE(base.ok()) << base.status();
    CmvnStats stats(base->cols);
    stats.AddFrames(*base);
    auto finished = FinishFeatures(opts, std::move(*base), stats);
    ASSERT_TRUE(finished.ok()) << finished.status();
    const Matrix& feats = *finished;
    const Matrix& ref = kaldi.at(key);
    ASSERT_EQ(feats.rows, ref.rows) << key;
    ASSERT_EQ(feats.cols, 39);
    float worst = 0;
    for (size_t i = 0; i < ref.data.size(); ++i) {
      worst = std::max(worst, std::abs(feats.data[i] - ref.data[i]));
    }
    EXPECT_LT(worst, 1e-3) << key;
  }
}

// Streaming in chunks of any size (empty, one sample, longer than a window) gives the offline
// features bit for bit, with every stage on: centred frames, dither, online CMVN, deltas.
TEST(FrontEndTest, StreamingEqualsOffline) {
  FrontEndOptions opts;
  opts.mfcc.frame.snip_edges = false;
  opts.mfcc.frame.dither = 1.0;
  opts.dither_seed = 99;
  opts.cmvn = CmvnMode::kOnline;
  opts.norm_vars = true;
  opts.cmn_window = 37;
  opts.deltas = {.order = 2, .window = 3};
  for (const int64_t samples : {int64_t{37913}, int64_t{1}, int64_t{401}, int64_t{0}}) {
    SCOPED_TRACE(samples);
    const std::vector<float> wave = RandomWave(samples, 21);
    auto base = ComputeBaseFeatures(opts, wave, 16000, 1.0, "utt");
    ASSERT_TRUE(base.ok());
    auto finished = FinishFeatures(opts, std::move(*base), CmvnStats(13));
    ASSERT_TRUE(finished.ok()) << finished.status();
    const Matrix& offline = *finished;

    auto online = OnlineFrontEnd::Create(opts, DitherSeed(opts.dither_seed, "utt"));
    ASSERT_TRUE(online.ok()) << online.status();
    EXPECT_EQ((*online)->lookahead_frames(), 6);
    std::vector<float> frames;
    std::mt19937 rng(4);
    int64_t at = 0;
    while (at < samples) {
      const int64_t n =
          std::min<int64_t>(samples - at, std::uniform_int_distribution<int>(0, 900)(rng));
      (*online)->AcceptWaveform(std::span<const float>(wave).subspan(at, n));
      at += n;
      (*online)->TakeFrames(&frames);
      // Nothing leaves before its look-ahead is in.
      const int64_t complete = NumFrames(at, opts.mfcc.frame);
      EXPECT_LE(static_cast<int64_t>(frames.size()) / 39, std::max<int64_t>(0, complete));
    }
    (*online)->InputFinished();
    (*online)->TakeFrames(&frames);
    ASSERT_EQ(static_cast<int64_t>(frames.size()), int64_t{offline.rows} * offline.cols);
    EXPECT_TRUE(std::equal(frames.begin(), frames.end(), offline.data.begin()));
  }
}

std::map<std::string, DoubleMatrix> ReadDoubleMatrixTable(const std::string& rspecifier) {
  std::map<std::string, DoubleMatrix> out;
  auto reader = DoubleMatrixTableReader::Open(rspecifier);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return out;
  std::string key;
  DoubleMatrix m;
  while (true) {
    auto more = (*reader)->Next(&key, &m);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) return out;
    out[key] = m;
  }
}

// An LDA+MLLT model's front end (tri2b, tri3b): spliced frames through the model's matrix.
// Streamed in chunks of any size it gives the offline features bit for bit; offline, on the kit's
// MFCCs with per-speaker CMVN, it gives what Kaldi's apply-cmvn | splice-feats | transform-feats
// gave (tests/data/kaldi-tri-feats) to float rounding.
TEST(FrontEndTest, SplicedAndTransformedStreamsEqualOfflineAndKaldi) {
  FrontEndOptions opts;
  ASSERT_TRUE(SetFrontEndOption("splice-left-context", "3", &opts).ok());
  ASSERT_TRUE(SetFrontEndOption("splice-right-context", "3", &opts).ok());
  ASSERT_TRUE(SetFrontEndOption("transform", DataPath("kaldi-tri-feats/final.mat"), &opts).ok());
  ASSERT_TRUE(opts.Validate().ok()) << opts.Validate();
  EXPECT_EQ(opts.dim(), 40);
  EXPECT_EQ(opts.lookahead(), 3);

  // Offline against Kaldi: the kit's MFCCs, CMVN by speaker.
  opts.cmvn = CmvnMode::kSpeaker;
  const auto mfcc = ReadTable("ark:" + DataPath("kaldi-tri-feats/feats.ark"));
  const auto cmvn = ReadDoubleMatrixTable("ark:" + DataPath("kaldi-tri-feats/cmvn.ark"));
  const auto utt2spk = ReadTokenMap("ark:" + DataPath("kaldi-tri-feats/utt2spk"));
  ASSERT_TRUE(utt2spk.ok());
  const auto kaldi = ReadTable("ark:" + DataPath("kaldi-tri-feats/feats_lda_tri2b.sub.ark"));
  ASSERT_EQ(kaldi.size(), 9u);
  for (const auto& [utt, want] : kaldi) {
    const DoubleMatrix& m = cmvn.at(utt2spk->at(utt));
    auto stats = CmvnStats::FromKaldiRows(m.rows, m.cols, m.data, false);
    ASSERT_TRUE(stats.ok());
    auto feats = FinishFeatures(opts, mfcc.at(utt), *stats);
    ASSERT_TRUE(feats.ok()) << feats.status();
    ASSERT_EQ(feats->rows, want.rows);
    ASSERT_EQ(feats->cols, 40);
    for (size_t i = 0; i < want.data.size(); ++i) {
      ASSERT_NEAR(feats->data[i], want.data[i], 1e-5) << utt << " value " << i;
    }
  }

  // Streaming against offline, with online CMVN and dither.
  opts.cmvn = CmvnMode::kOnline;
  opts.mfcc.frame.dither = 1.0;
  opts.dither_seed = 5;
  for (const int64_t samples : {int64_t{23911}, int64_t{400}, int64_t{1}, int64_t{0}}) {
    SCOPED_TRACE(samples);
    const std::vector<float> wave = RandomWave(samples, 8);
    auto base = ComputeBaseFeatures(opts, wave, 16000, 1.0, "utt");
    ASSERT_TRUE(base.ok());
    auto offline = FinishFeatures(opts, std::move(*base), CmvnStats(13));
    ASSERT_TRUE(offline.ok()) << offline.status();
    auto online = OnlineFrontEnd::Create(opts, DitherSeed(opts.dither_seed, "utt"));
    ASSERT_TRUE(online.ok()) << online.status();
    EXPECT_EQ((*online)->dim(), 40);
    std::vector<float> frames;
    std::mt19937 rng(6);
    int64_t at = 0;
    while (at < samples) {
      const int64_t n =
          std::min<int64_t>(samples - at, std::uniform_int_distribution<int>(0, 700)(rng));
      (*online)->AcceptWaveform(std::span<const float>(wave).subspan(at, n));
      at += n;
      (*online)->TakeFrames(&frames);
      // A frame leaves only when the 3 frames after it are in.
      const int64_t complete = NumFrames(at, opts.mfcc.frame);
      EXPECT_LE(static_cast<int64_t>(frames.size()) / 40, std::max<int64_t>(0, complete - 3));
    }
    (*online)->InputFinished();
    (*online)->TakeFrames(&frames);
    ASSERT_EQ(static_cast<int64_t>(frames.size()), int64_t{offline->rows} * 40);
    EXPECT_TRUE(std::equal(frames.begin(), frames.end(), offline->data.begin()));
  }
}

// A transform of the wrong size, one with a NaN, a missing file, deltas with a splice: errors
// that say which option.
TEST(FrontEndTest, BadSpliceAndTransformOptionsAreRefused) {
  TempDir dir;
  FrontEndOptions opts;
  EXPECT_FALSE(SetFrontEndOption("transform", dir.file("missing.mat"), &opts).ok());
  ASSERT_TRUE(SetFrontEndOption("transform", DataPath("kaldi-tri-feats/final.mat"), &opts).ok());
  absl::Status wrong = opts.Validate();  // 13-dim frames, a 91-column matrix
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.message().find("the frames before it have dimension 13"), absl::string_view::npos)
      << wrong;
  opts.splice_left = opts.splice_right = 3;
  EXPECT_TRUE(opts.Validate().ok());
  opts.deltas.order = 2;
  EXPECT_FALSE(opts.Validate().ok());
  opts.deltas.order = 0;
  Matrix nan = *opts.transform;
  nan.at(3, 5) = std::nanf("");
  opts.transform = std::make_shared<const Matrix>(nan);
  EXPECT_FALSE(opts.Validate().ok());
  // A stream's front end refuses what the options refuse, before any audio.
  opts.splice_left = opts.splice_right = 2;
  EXPECT_FALSE(OnlineFrontEnd::Create(opts, 0).ok());
}

TEST(FrontEndTest, StreamsRefuseWholeUtteranceCmvn) {
  FrontEndOptions opts;
  opts.cmvn = CmvnMode::kUtterance;
  EXPECT_FALSE(OnlineFrontEnd::Create(opts, 0).ok());
}

TEST(DeltasTest, RegressionOverTheWindowWithEdgesRepeated) {
  Matrix x(6, 2);
  for (int32_t t = 0; t < 6; ++t) {
    x.at(t, 0) = static_cast<float>(3 * t);  // slope 3
    x.at(t, 1) = static_cast<float>(t * t);  // acceleration 2
  }
  const Matrix d = ComputeDeltas({.order = 2, .window = 2}, x);
  ASSERT_EQ(d.cols, 6);
  // Away from the edges a ramp's delta is its slope and a parabola's second order its curvature.
  EXPECT_NEAR(d.at(2, 2), 3.0, 1e-6);
  EXPECT_NEAR(d.at(3, 2), 3.0, 1e-6);
  const Matrix d1 = ComputeDeltas({.order = 1, .window = 1}, x);
  // Window 1: (x[t+1] - x[t-1]) / 2, with x[-1] = x[0] and x[6] = x[5].
  EXPECT_NEAR(d1.at(0, 2), (3.0 - 0.0) / 2, 1e-6);
  EXPECT_NEAR(d1.at(5, 2), (15.0 - 12.0) / 2, 1e-6);
  EXPECT_NEAR(d1.at(3, 3), (16.0 - 4.0) / 2, 1e-6);
  // Kaldi's order-2 window-2 weights: (2 1 0 -1 -2)/10 convolved with itself.
  const Matrix impulse = [] {
    Matrix m(11, 1);
    m.at(5, 0) = 1;
    return m;
  }();
  const Matrix di = ComputeDeltas({.order = 2, .window = 2}, impulse);
  const double expect[9] = {4, 4, 1, -4, -10, -4, 1, 4, 4};  // times 1/100, reversed in time
  for (int32_t j = -4; j <= 4; ++j) EXPECT_NEAR(di.at(5 - j, 2), expect[j + 4] / 100, 1e-7) << j;
}

TEST(CmvnTest, UtteranceAndSlidingWindow) {
  Matrix x(50, 3);
  std::mt19937 rng(1);
  std::normal_distribution<float> g(5, 2);
  for (float& v : x.data) v = g(rng);
  Matrix normed = x;
  CmvnStats stats(3);
  stats.AddFrames(x);
  ApplyCmvn(stats, true, &normed);
  for (int32_t d = 0; d < 3; ++d) {
    double s = 0, s2 = 0;
    for (int32_t t = 0; t < 50; ++t) {
      s += normed.at(t, d);
      s2 += double{normed.at(t, d)} * normed.at(t, d);
    }
    EXPECT_NEAR(s / 50, 0, 1e-5);
    EXPECT_NEAR(s2 / 50, 1, 1e-4);
  }
  // Frame t of the sliding CMVN: minus the mean of frames max(0, t-6) .. t.
  SlidingCmvn sliding(3, 7, false);
  for (int32_t t = 0; t < 50; ++t) {
    std::vector<float> frame(x.row(t), x.row(t) + 3);
    sliding.Process(frame.data());
    for (int32_t d = 0; d < 3; ++d) {
      double mean = 0;
      const int32_t from = std::max(0, t - 6);
      for (int32_t u = from; u <= t; ++u) mean += x.at(u, d);
      mean /= t - from + 1;
      EXPECT_NEAR(frame[d], x.at(t, d) - mean, 1e-5) << t;
    }
  }
}

TEST(WaveReaderTest, ReadsPcmAndFindsTheObjectsEnd) {
  const std::vector<float> left = RandomWave(1000, 1), right = RandomWave(1000, 2);
  std::istringstream stereo(WaveBytes({left, right}, 8000) + WaveBytes({right}, 16000));
  auto first = ReadWave(stereo, "two.ark");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->sample_rate, 8000);
  ASSERT_EQ(first->channels.size(), 2u);
  EXPECT_EQ(first->channels[0], left);
  EXPECT_EQ(first->channels[1], right);
  auto second = ReadWave(stereo, "two.ark");  // the next object in the same stream
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->channels[0], right);

  // A writer to a pipe (sox) leaves the sizes unknown: the data runs to the end.
  for (const int64_t unknown : {int64_t{0}, int64_t{0xFFFFFFFF}, int64_t{0x7FFFF024}}) {
    std::istringstream piped(WaveBytes({left}, 16000, unknown, unknown == 0 ? 0 : 0x7FFFF000));
    auto wave = ReadWave(piped, "pipe");
    ASSERT_TRUE(wave.ok()) << wave.status();
    EXPECT_EQ(wave->channels[0], left);
  }
}

TEST(WaveReaderTest, BadInputIsAnErrorNamingIt) {
  const std::string good = WaveBytes({RandomWave(1000, 1)}, 16000);
  std::istringstream truncated(good.substr(0, 1200));
  auto t = ReadWave(truncated, "cut.wav");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("cut.wav"), std::string::npos);
  EXPECT_NE(t.status().message().find("truncated"), std::string::npos);
  std::istringstream text("hello, world, this is not audio");
  auto n = ReadWave(text, "notes.txt");
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("notes.txt"), std::string::npos);
  std::istringstream empty("");
  EXPECT_FALSE(ReadWave(empty, "empty").ok());
  // A streamed file (sizes unknown) with a chunk that claims almost 4 GiB: found by fuzzing,
  // this once looped for ever (the chunk walk's step wrapped to 0 in 32 bits).
  std::string huge_chunk = "RIFF";
  PutLe(&huge_chunk, 0, 4);
  huge_chunk += "WAVEjunk";
  PutLe(&huge_chunk, 0xFFFFFFF8u, 4);
  huge_chunk += std::string(64, '\xff');
  std::istringstream hc(huge_chunk);
  EXPECT_FALSE(ReadWave(hc, "huge-chunk").ok());
  std::string bad_format = good;
  bad_format[20] = 0x34;  // format tag 0x1234: no such codec
  bad_format[21] = 0x12;
  std::istringstream bf(bad_format);
  EXPECT_FALSE(ReadWave(bf, "bad").ok());
}

TEST(FrontEndOptionsTest, KaldiConfigFilesAndTheirErrors) {
  FrontEndOptions opts;
  auto other = ApplyFrontEndConfig("mfcc.conf",
                                   "# Kaldi's syntax\n--use-energy=false  # no energy\n\n"
                                   "--sample-frequency=8000\n--snip-edges=false\n--delta-order=2\n"
                                   "--min-duration=0.5\n",
                                   &opts, {"min-duration"});
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_FALSE(opts.mfcc.use_energy);
  EXPECT_EQ(opts.mfcc.frame.samp_freq, 8000);
  EXPECT_FALSE(opts.mfcc.frame.snip_edges);
  EXPECT_EQ(opts.dim(), 39);
  ASSERT_EQ(other->size(), 1u);
  EXPECT_EQ((*other)[0].second, "0.5");
  for (const char* bad : {"--num-ceps=thirteen\n", "--use-energy=maybe\n", "--frobnicate=1\n",
                          "use-energy=false\n", "--cmvn=global\n"}) {
    FrontEndOptions o;
    auto s = ApplyFrontEndConfig("bad.conf", std::string("\n\n") + bad, &o);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.status().message().find("bad.conf:3"), std::string::npos) << s.status();
  }
  EXPECT_FALSE(ReadFrontEndConfig("/nonexistent/mfcc.conf").ok());
}

}  // namespace
}  // namespace gmmscore::testing

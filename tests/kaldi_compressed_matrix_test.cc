// Kaldi's CompressedMatrix writer (formats/kaldi_compressed_matrix.h): every method through the
// reader within the error each guarantees, bytes pinned to what Kaldi writes, and the real
// archives of kaldi-tri: Kaldi's own copy-feats --compress=true output reproduced from its input.
#include "formats/kaldi_compressed_matrix.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "formats/kaldi_io.h"
#include "tests/test_util.h"

namespace gmmscore {
namespace {

using testing::DataPath;
using testing::ReadFile;

constexpr CompressionMethod kAllMethods[] = {
    CompressionMethod::kAutomatic,      CompressionMethod::kSpeechFeature,
    CompressionMethod::kTwoByteAuto,    CompressionMethod::kTwoByteSignedInteger,
    CompressionMethod::kOneByteAuto,    CompressionMethod::kOneByteUnsignedInteger,
    CompressionMethod::kOneByteZeroOne,
};

// kaldi-tri is part of the shared test data beside the checkout (../shared/testdata), not of
// tests/data; GMMSCORE_SHARED_TESTDATA names that folder elsewhere.
std::string KaldiTriPath(const std::string& relative) {
  if (const char* shared = std::getenv("GMMSCORE_SHARED_TESTDATA")) {
    return std::string(shared) + "/kaldi-tri/" + relative;
  }
  return DataPath("../../../shared/testdata/kaldi-tri/" + relative);
}

std::string Compress(const Matrix& m, CompressionMethod method) {
  auto bytes = CompressMatrix(m, method);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.ok() ? *bytes : std::string();
}

absl::StatusOr<Matrix> Decode(const std::string& object) {
  std::istringstream is(object);
  KaldiReader reader(is, "compressed", /*binary=*/true);
  return reader.FloatMatrix();
}

// The token, and the global header that follows it.
struct Parsed {
  std::string token;
  float min_value = 0;
  float range = 0;
  int32_t rows = 0;
  int32_t cols = 0;
};

Parsed Parse(const std::string& object) {
  Parsed p;
  const size_t space = object.find(' ');
  p.token = object.substr(0, space);
  if (space == std::string::npos || object.size() < space + 17) return p;
  const char* h = object.data() + space + 1;
  std::memcpy(&p.min_value, h, 4);
  std::memcpy(&p.range, h + 4, 4);
  std::memcpy(&p.rows, h + 8, 4);
  std::memcpy(&p.cols, h + 12, 4);
  return p;
}

bool OneBytePerValueWithColumnHeaders(CompressionMethod method, int32_t rows) {
  return method == CompressionMethod::kSpeechFeature ||
         (method == CompressionMethod::kAutomatic && rows > 8);
}

std::string ExpectedToken(CompressionMethod method, int32_t rows) {
  if (OneBytePerValueWithColumnHeaders(method, rows)) return "CM";
  switch (method) {
    case CompressionMethod::kAutomatic:
    case CompressionMethod::kTwoByteAuto:
    case CompressionMethod::kTwoByteSignedInteger:
      return "CM2";
    default:
      return "CM3";
  }
}

size_t ExpectedSize(const std::string& token, int32_t rows, int32_t cols) {
  const size_t values = size_t(rows) * size_t(cols);
  if (token == "CM") return 3 + 16 + 8 * size_t(cols) + values;
  return 4 + 16 + (token == "CM2" ? 2 : 1) * values;
}

// The largest error each layout allows at a value of column `c`: half a code (rounding adds
// 0.499, so a little over half) plus float rounding at the values' magnitude, plus the rounding of
// the decoder's step times the largest code, which matters only where the step is a denormal.
// "CM" codes a column in 64/128/63 steps between percentiles that are themselves 16-bit codes of
// the global range.
float Tolerance(const Matrix& m, const Parsed& p, int32_t c) {
  float magnitude = std::max(std::fabs(p.min_value), std::fabs(p.min_value + p.range));
  for (float x : m.data) magnitude = std::max(magnitude, std::fabs(x));
  const float denormal = std::numeric_limits<float>::denorm_min();
  const float rounding = 8 * FLT_EPSILON * magnitude + 65535 * denormal;
  if (p.token == "CM2") return 0.502f * p.range / 65535 + rounding;
  if (p.token == "CM3") return 0.502f * p.range / 255 + rounding;
  float lo = m.at(0, c), hi = m.at(0, c);
  for (int32_t r = 0; r < m.rows; ++r) {
    lo = std::min(lo, m.at(r, c));
    hi = std::max(hi, m.at(r, c));
  }
  const float step16 = p.range / 65535;
  return 0.502f * (hi - lo + 4 * step16) / 63 + step16 + rounding;
}

// Compresses `m`, checks the token and size, reads it back and checks every value against `m`
// clamped to the representable range, within the method's bound.
void ExpectRoundTrip(const Matrix& m, CompressionMethod method) {
  SCOPED_TRACE(::testing::Message()
               << "method " << static_cast<int>(method) << ", " << m.rows << " x " << m.cols);
  const std::string object = Compress(m, method);
  const Parsed p = Parse(object);
  ASSERT_EQ(p.token, ExpectedToken(method, m.rows));
  EXPECT_EQ(object.size(), ExpectedSize(p.token, m.rows, m.cols));
  EXPECT_EQ(p.rows, m.rows);
  EXPECT_EQ(p.cols, m.cols);
  auto decoded = Decode(object);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_EQ(decoded->rows, m.rows);
  ASSERT_EQ(decoded->cols, m.cols);
  for (int32_t c = 0; c < m.cols; ++c) {
    const float tolerance = Tolerance(m, p, c);
    for (int32_t r = 0; r < m.rows; ++r) {
      const float expected = std::clamp(m.at(r, c), p.min_value, p.min_value + p.range);
      ASSERT_NEAR(decoded->at(r, c), expected, tolerance) << "at " << r << ", " << c;
    }
  }
}

// Values each method is meant for: features for the data-driven ones, the fixed ranges' own.
Matrix RandomMatrix(int32_t rows, int32_t cols, CompressionMethod method, std::mt19937* rng) {
  std::uniform_real_distribution<float> uniform(0, 1);
  Matrix m(rows, cols);
  for (int32_t c = 0; c < cols; ++c) {
    const float mean = 40 * uniform(*rng) - 20, scale = std::pow(10.0f, 3 * uniform(*rng) - 2);
    std::normal_distribution<float> normal(mean, scale);
    for (int32_t r = 0; r < rows; ++r) {
      float& x = m.at(r, c);
      switch (method) {
        case CompressionMethod::kTwoByteSignedInteger:
          x = 65535 * uniform(*rng) - 32768;
          break;
        case CompressionMethod::kOneByteUnsignedInteger:
          x = 255 * uniform(*rng);
          break;
        case CompressionMethod::kOneByteZeroOne:
          x = uniform(*rng);
          break;
        default:
          x = normal(*rng);
      }
    }
  }
  return m;
}

TEST(KaldiCompressedMatrix, ParsesKaldisMethodNumbers) {
  for (int value = 1; value <= 7; ++value) {
    auto method = ParseCompressionMethod(value);
    ASSERT_TRUE(method.ok()) << method.status();
    EXPECT_EQ(static_cast<int>(*method), value);
  }
  for (int value : {0, 8, -1, 100}) {
    EXPECT_EQ(ParseCompressionMethod(value).status().code(), absl::StatusCode::kInvalidArgument)
        << value;
  }
}

TEST(KaldiCompressedMatrix, RoundTripsEveryMethodAndShapeWithinItsBound) {
  std::mt19937 rng(20251128);
  const std::pair<int32_t, int32_t> shapes[] = {{1, 1}, {3, 5}, {8, 13}, {9, 13}, {200, 39}};
  for (const CompressionMethod method : kAllMethods) {
    for (const auto& [rows, cols] : shapes) {
      ExpectRoundTrip(RandomMatrix(rows, cols, method, &rng), method);
    }
  }
}

TEST(KaldiCompressedMatrix, AutomaticPicksTwoBytesUpToEightRowsAndColumnHeadersAbove) {
  std::mt19937 rng(1);
  const CompressionMethod automatic = CompressionMethod::kAutomatic;
  EXPECT_EQ(Parse(Compress(RandomMatrix(8, 13, automatic, &rng), automatic)).token, "CM2");
  EXPECT_EQ(Parse(Compress(RandomMatrix(9, 13, automatic, &rng), automatic)).token, "CM");
  // The same matrix as method 2 and 3.
  const Matrix m = RandomMatrix(20, 4, automatic, &rng);
  EXPECT_EQ(Compress(m, automatic), Compress(m, CompressionMethod::kSpeechFeature));
  const Matrix small = RandomMatrix(5, 4, automatic, &rng);
  EXPECT_EQ(Compress(small, automatic), Compress(small, CompressionMethod::kTwoByteAuto));
}

// Hard inputs, each through every method.
std::map<std::string, Matrix> HardMatrices() {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0, 1);
  std::map<std::string, Matrix> cases;
  Matrix constant_column(50, 4);
  for (int32_t r = 0; r < 50; ++r) {
    constant_column.at(r, 0) = 3.5f;
    for (int32_t c = 1; c < 4; ++c) constant_column.at(r, c) = normal(rng);
  }
  cases["constant column"] = constant_column;
  Matrix constant(12, 3);
  std::fill(constant.data.begin(), constant.data.end(), -7.25f);
  cases["constant matrix"] = constant;
  Matrix zeros(10, 2);
  cases["all zero"] = zeros;
  Matrix huge(40, 3);
  for (float& x : huge.data) x = 1e30f * normal(rng);
  huge.at(0, 0) = -1e32f;
  huge.at(1, 1) = 1e32f;
  cases["huge range"] = huge;
  Matrix negative(30, 5);
  for (float& x : negative.data) x = -1000 + normal(rng);
  cases["negative values"] = negative;
  for (const float odd : {100.0f, -100.0f}) {
    Matrix one_differs(33, 3);
    for (float& x : one_differs.data) x = normal(rng);
    for (int32_t r = 0; r < 33; ++r) one_differs.at(r, 1) = 5;
    one_differs.at(17, 1) = odd;
    cases[odd > 0 ? "all equal but one above" : "all equal but one below"] = one_differs;
  }
  // A range small against the values: percentiles closer than a float step apart.
  Matrix offset(25, 3);
  for (float& x : offset.data) x = 1000 + 0.5f * std::fabs(normal(rng));
  cases["small range far from zero"] = offset;
  Matrix tiny(20, 2);
  for (float& x : tiny.data) x = 1e-40f * normal(rng);
  cases["denormal range"] = tiny;
  return cases;
}

TEST(KaldiCompressedMatrix, HardInputsStayWithinTheBound) {
  for (const auto& [name, m] : HardMatrices()) {
    SCOPED_TRACE(name);
    for (const CompressionMethod method : kAllMethods) ExpectRoundTrip(m, method);
  }
}

TEST(KaldiCompressedMatrix, ConstantMatrixRangeIsOnePlusMagnitude) {
  Matrix m(3, 2);
  std::fill(m.data.begin(), m.data.end(), -7.25f);
  const Parsed p = Parse(Compress(m, CompressionMethod::kTwoByteAuto));
  EXPECT_EQ(p.min_value, -7.25f);
  EXPECT_EQ(p.range, 8.25f);
  auto decoded = Decode(Compress(m, CompressionMethod::kTwoByteAuto));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->data, m.data);  // code 0 is the minimum exactly
}

TEST(KaldiCompressedMatrix, FixedRangesKeepTheirIntegersAndClamp) {
  Matrix ints(2, 5);
  ints.data = {-32768, -1, 0, 12345, 32767, 7, -20000, 1, 2, 3};
  auto decoded = Decode(Compress(ints, CompressionMethod::kTwoByteSignedInteger));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->data, ints.data);
  Matrix bytes(1, 4);
  bytes.data = {0, 1, 128, 255};
  decoded = Decode(Compress(bytes, CompressionMethod::kOneByteUnsignedInteger));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->data, bytes.data);

  const float inf = std::numeric_limits<float>::infinity();
  Matrix outside(1, 4);
  outside.data = {-1e6f, 1e6f, -inf, inf};
  decoded = Decode(Compress(outside, CompressionMethod::kTwoByteSignedInteger));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->data, (std::vector<float>{-32768, 32767, -32768, 32767}));
  decoded = Decode(Compress(outside, CompressionMethod::kOneByteUnsignedInteger));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->data, (std::vector<float>{0, 255, 0, 255}));
  decoded = Decode(Compress(outside, CompressionMethod::kOneByteZeroOne));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->data, (std::vector<float>{0, 1, 0, 1}));
}

TEST(KaldiCompressedMatrix, RefusesWhatKaldiCannotCompress) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Matrix with_nan(2, 2);
  with_nan.data = {1, nan, 3, 4};
  for (const CompressionMethod method : kAllMethods) {
    EXPECT_EQ(CompressMatrix(with_nan, method).status().code(), absl::StatusCode::kInvalidArgument);
  }
  Matrix with_inf(2, 2);
  with_inf.data = {1, 2, -inf, 4};
  for (const CompressionMethod method :
       {CompressionMethod::kAutomatic, CompressionMethod::kSpeechFeature,
        CompressionMethod::kTwoByteAuto, CompressionMethod::kOneByteAuto}) {
    EXPECT_EQ(CompressMatrix(with_inf, method).status().code(), absl::StatusCode::kInvalidArgument);
  }
  // Finite, but max - min is not: Kaldi would write codes that decode to NaN.
  Matrix overflow(1, 2);
  overflow.data = {-3e38f, 3e38f};
  EXPECT_EQ(CompressMatrix(overflow, CompressionMethod::kTwoByteAuto).status().code(),
            absl::StatusCode::kInvalidArgument);
  Matrix huge_constant(1, 1);
  huge_constant.data = {3e38f};  // min + (1 + |min|) overflows
  EXPECT_EQ(CompressMatrix(huge_constant, CompressionMethod::kTwoByteAuto).status().code(),
            absl::StatusCode::kInvalidArgument);
  Matrix inconsistent(2, 3);
  inconsistent.data.pop_back();
  EXPECT_EQ(CompressMatrix(inconsistent, CompressionMethod::kAutomatic).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Bytes written by Kaldi's own CompressedMatrix (commit f4007661, x86-64) for small matrices
// that take the less common paths.
TEST(KaldiCompressedMatrix, MatchesKaldisBytesOnItsCornerCases) {
  struct Golden {
    const char* what;
    CompressionMethod method;
    int32_t rows, cols;
    std::vector<float> values;
    std::string bytes;
  };
  const Golden goldens[] = {
      {"percentiles closer than a float step (range 3 at 1000)",
       CompressionMethod::kSpeechFeature,
       6,
       2,
       {1000, 1000.5, 1000.25, 1000.5, 1000.5, 1000.5, 1000.75, 1000.5, 1001, 1000.5, 1003, 1000.5},
       std::string("CM \x00\x00\x7a\x44\x00\x00\x40\x40\x06\x00\x00\x00\x02\x00\x00\x00\x00\x00"
                   "\x55\x15\x00\x40\xff\xff\xaa\x2a\xab\x2a\xac\x2a\xad\x2a\x00\x40\x80\xc0\xc7"
                   "\xff\x40\x40\x40\x40\x40\x40",
                   47)},
      {"fewer than 5 rows with column headers",
       CompressionMethod::kSpeechFeature,
       3,
       2,
       {1.5, -2, -0.5, 7, 4, 7},
       std::string("CM \x00\x00\x00\xc0\x00\x00\x10\x41\x03\x00\x00\x00\x02\x00\x00\x00\xaa\x2a"
                   "\x8e\x63\xaa\xaa\xab\xaa\x00\x00\xfd\xff\xfe\xff\xff\xff\x40\x00\xc0\x00\xff"
                   "\xff",
                   41)},
      {"a negative zero first: the minimum keeps its sign",
       CompressionMethod::kAutomatic,
       2,
       3,
       {-0.0f, 0, 1, 2, 3, -0.0f},
       std::string("CM2 \x00\x00\x00\x80\x00\x00\x40\x40\x02\x00\x00\x00\x03\x00\x00\x00\x00\x00"
                   "\x00\x00\x55\x55\xaa\xaa\xff\xff\x00\x00",
                   32)},
      {"one byte per value",
       CompressionMethod::kOneByteAuto,
       2,
       2,
       {-1, 0.1f, 0.2f, 4},
       std::string("CM3 \x00\x00\x80\xbf\x00\x00\xa0\x40\x02\x00\x00\x00\x02\x00\x00\x00\x00\x38"
                   "\x3d\xff",
                   24)},
  };
  for (const Golden& g : goldens) {
    Matrix m(g.rows, g.cols);
    m.data = g.values;
    EXPECT_EQ(Compress(m, g.method), g.bytes) << g.what;
  }
}

TEST(KaldiCompressedMatrix, EmptyMatrixIsKaldisSpecialCase) {
  const std::string expected = std::string("CM ") + std::string(20, '\0');
  EXPECT_EQ(Compress(Matrix(), CompressionMethod::kAutomatic), expected);
  EXPECT_EQ(Compress(Matrix(0, 13), CompressionMethod::kOneByteAuto), expected);
  // Kaldi's reader, like ours, reads 16 of those 20 bytes: an empty matrix, 4 bytes left over.
  std::istringstream is(expected);
  KaldiReader reader(is, "empty", /*binary=*/true);
  auto m = reader.FloatMatrix();
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->rows, 0);
  EXPECT_EQ(m->cols, 0);
  EXPECT_EQ(is.tellg(), std::streampos(19));

  std::ostringstream text;
  ASSERT_TRUE(WriteCompressedMatrix(Matrix(), CompressionMethod::kAutomatic, text, false).ok());
  EXPECT_EQ(text.str(), " [ ]\n");
}

TEST(KaldiCompressedMatrix, TextModeWritesTheDecompressedValues) {
  std::mt19937 rng(3);
  const Matrix m = RandomMatrix(12, 5, CompressionMethod::kAutomatic, &rng);
  auto decoded = Decode(Compress(m, CompressionMethod::kAutomatic));
  ASSERT_TRUE(decoded.ok());
  std::ostringstream expected;
  KaldiWriter(expected, /*binary=*/false).FloatMatrix(*decoded);
  std::ostringstream text;
  ASSERT_TRUE(WriteCompressedMatrix(m, CompressionMethod::kAutomatic, text, false).ok());
  EXPECT_EQ(text.str(), expected.str());
  EXPECT_EQ(text.str().substr(0, 5), " [\n  ");

  std::ostringstream binary;
  ASSERT_TRUE(WriteCompressedMatrix(m, CompressionMethod::kAutomatic, binary).ok());
  EXPECT_EQ(binary.str(), Compress(m, CompressionMethod::kAutomatic));
}

// Compressing the values an object decodes to is not idempotent in general, for two reasons.
// (1) The header is recomputed from the decoded matrix. Its minimum decodes exactly (code 0,
// byte 0; but a minimum of -0 comes back as +0), whereas its maximum decodes as the minimum plus
// the top code times a rounded float step (for "CM" then through the top byte of its column),
// which can land a float ulp away; a different range then moves every code. (2) "CM" only: a
// percentile is re-estimated from the decoded value of the sample it came from. That sample lies
// within half a 16-bit step of its percentile, and it decodes to the interval's boundary byte,
// hence to the percentile again, only when half a byte step of the neighbouring interval is at
// least half a 16-bit step, i.e. when the interval spans at least as many 16-bit codes as it has
// bytes (64, 128, 63). In a narrower interval (a column whose spread is small against the whole
// matrix's range) the sample may decode a byte away, its code move by one, and the column's bytes
// with it. Besides, every code must survive decoding to a float and back, which needs a code step
// well above the float resolution at the values' magnitude. Where the header comes out the same
// and all that holds, the object must come back byte for byte.
bool MustRecompressIdentically(const std::string& object, const std::string& again) {
  const Parsed was = Parse(object);
  const size_t header_end = was.token.size() + 1 + 16;
  if (object.compare(0, header_end, again, 0, header_end) != 0) return false;
  const float magnitude = std::max(std::fabs(was.min_value), std::fabs(was.min_value + was.range));
  const float levels = was.token == "CM3" ? 255 : 65535;
  if (was.range / levels <= 4 * FLT_EPSILON * magnitude) return false;
  if (was.token != "CM") return true;
  for (int32_t c = 0; c < was.cols; ++c) {
    uint16_t p[4];
    std::memcpy(p, object.data() + header_end + 8 * size_t(c), sizeof(p));
    if (p[1] - p[0] < 64 || p[2] - p[1] < 128 || p[3] - p[2] < 63) return false;
  }
  return true;
}

TEST(KaldiCompressedMatrix, RecompressingDecodedValuesIsIdempotentWhereItMustBe) {
  std::mt19937 rng(11);
  int cases = 0, must_hold = 0;
  for (int i = 0; i < 50; ++i) {
    for (const CompressionMethod method : kAllMethods) {
      const int32_t rows = 1 + int32_t(rng() % 300), cols = 1 + int32_t(rng() % 40);
      const std::string object = Compress(RandomMatrix(rows, cols, method, &rng), method);
      auto decoded = Decode(object);
      ASSERT_TRUE(decoded.ok()) << decoded.status();
      const std::string again = Compress(*decoded, method);
      ++cases;
      if (!MustRecompressIdentically(object, again)) continue;
      ++must_hold;
      EXPECT_TRUE(again == object)
          << "method " << static_cast<int>(method) << ", " << rows << " x " << cols;
    }
  }
  EXPECT_GT(must_hold, cases / 2);  // the condition is not vacuous
}

// One entry of a binary archive: its key, the object's bytes (after "\0B") and its values.
struct ArchiveEntry {
  std::string key;
  std::string object;
  Matrix value;
};

std::vector<ArchiveEntry> ReadArchive(const std::string& path) {
  const std::string bytes = ReadFile(path);
  std::istringstream is(bytes);
  std::vector<ArchiveEntry> entries;
  while (is >> std::ws, is.peek() != EOF) {
    ArchiveEntry e;
    is >> e.key;
    is.get();
    EXPECT_TRUE(KaldiReader::ConsumeBinaryMarker(is)) << e.key;
    const auto start = is.tellg();
    KaldiReader reader(is, e.key, /*binary=*/true);
    auto m = reader.FloatMatrix();
    EXPECT_TRUE(m.ok()) << m.status();
    if (!m.ok()) break;
    e.object = bytes.substr(size_t(start), size_t(is.tellg() - start));
    e.value = *std::move(m);
    entries.push_back(std::move(e));
  }
  return entries;
}

// recipe/mfcc_dev_d0 is make_mfcc.sh's output at dither 0 (compute-mfcc-feats | copy-feats
// --compress=true), feats/mfcc_dither0.ark the same MFCCs uncompressed: compressing the latter
// must give the former, byte for byte.
TEST(KaldiCompressedMatrix, ReproducesCopyFeatsCompressOnRealMfccs) {
  const std::string plain = KaldiTriPath("feats/mfcc_dither0.ark");
  if (!std::filesystem::exists(plain)) GTEST_SKIP() << plain << " is missing (shared test data)";
  std::map<std::string, Matrix> inputs;
  for (ArchiveEntry& e : ReadArchive(plain)) inputs[e.key] = std::move(e.value);
  int compared = 0, identical = 0;
  for (const char* part : {"1", "2"}) {
    const std::string path =
        KaldiTriPath(std::string("recipe/mfcc_dev_d0/raw_mfcc_dev_d0.") + part + ".ark");
    for (const ArchiveEntry& e : ReadArchive(path)) {
      ASSERT_EQ(inputs.count(e.key), 1u) << e.key;
      ++compared;
      const std::string ours = Compress(inputs[e.key], CompressionMethod::kAutomatic);
      if (ours == e.object) ++identical;
      EXPECT_EQ(ours.size(), e.object.size()) << e.key;
      EXPECT_TRUE(ours == e.object) << e.key << " differs from Kaldi's bytes";
    }
  }
  EXPECT_EQ(compared, 102);
  EXPECT_EQ(identical, compared);
  RecordProperty("identical", identical);
}

// feats/feats.ark (dither 1) holds only Kaldi's compressed output, so the check there is that
// decompressing and compressing again gives Kaldi's bytes back, which must hold where
// MustRecompressIdentically says so; and for these MFCCs it says so for every utterance.
TEST(KaldiCompressedMatrix, RecompressingKaldisFeatsGivesKaldisBytes) {
  const std::string path = DataPath("kaldi-tri-feats/feats.ark");  // in-tree copy
  int total = 0, must_hold = 0, identical = 0;
  for (const ArchiveEntry& e : ReadArchive(path)) {
    ++total;
    ASSERT_EQ(Parse(e.object).token, "CM") << e.key;
    const std::string again = Compress(e.value, CompressionMethod::kAutomatic);
    EXPECT_EQ(Parse(again).min_value, Parse(e.object).min_value) << e.key;
    if (again == e.object) ++identical;
    if (MustRecompressIdentically(e.object, again)) {
      ++must_hold;
      EXPECT_TRUE(again == e.object) << e.key << " recompresses differently";
    }
  }
  EXPECT_EQ(total, 102);
  EXPECT_EQ(must_hold, total);
  std::cout << "feats.ark: " << identical << " of " << total
            << " utterances recompress byte for byte (" << must_hold << " must)\n";
  RecordProperty("identical", identical);
}

}  // namespace
}  // namespace gmmscore

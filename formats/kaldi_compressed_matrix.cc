#include "formats/kaldi_compressed_matrix.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "formats/kaldi_io.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// How the codes follow the global header (Kaldi's DataFormat; the token names it).
enum class Layout { kColumnHeaders, kTwoByte, kOneByte };

// The global header as it is written: Kaldi's GlobalHeader without its leading format word.
struct Header {
  float min_value = 0;
  float range = 0;
  int32_t rows = 0;
  int32_t cols = 0;
};
static_assert(sizeof(Header) == 16, "the header is four 4-byte fields");
static_assert(sizeof(std::array<uint16_t, 4>) == 8, "a column header is four uint16 codes");

// The float literal Kaldi scales the range by to decode a 16-bit code (very nearly 1/65535).
constexpr float kUint16Step = 1.52590218966964e-05F;

const char* TokenOf(Layout layout) {
  switch (layout) {
    case Layout::kColumnHeaders:
      return "CM";
    case Layout::kTwoByte:
      return "CM2";
    case Layout::kOneByte:
      break;
  }
  return "CM3";
}

Layout LayoutOf(CompressionMethod method, int32_t rows) {
  switch (method) {
    case CompressionMethod::kAutomatic:
      return rows > 8 ? Layout::kColumnHeaders : Layout::kTwoByte;
    case CompressionMethod::kSpeechFeature:
      return Layout::kColumnHeaders;
    case CompressionMethod::kTwoByteAuto:
    case CompressionMethod::kTwoByteSignedInteger:
      return Layout::kTwoByte;
    case CompressionMethod::kOneByteAuto:
    case CompressionMethod::kOneByteUnsignedInteger:
    case CompressionMethod::kOneByteZeroOne:
      break;
  }
  return Layout::kOneByte;
}

// Kaldi's static_cast<int>(double) as x86-64 computes it (cvttsd2si): truncation toward zero, and
// INT_MIN for NaN and anything outside int's range, where C++ leaves the result undefined.
int32_t TruncateAsX86(double x) {
  if (!(x > -2147483649.0 && x < 2147483648.0)) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(x);
}

// The smallest and largest values in Kaldi's scan order (MatrixBase::Min/Max: row-major from the
// first value, replaced only by a strictly smaller or larger one), which decides the sign of a
// zero extreme and so the header's bytes.
void ScanExtremes(const Matrix& m, float* min_value, float* max_value) {
  *min_value = *max_value = m.data[0];
  for (const float x : m.data) {
    if (x < *min_value) *min_value = x;
    if (x > *max_value) *max_value = x;
  }
}

// min_value and range from the data, for the methods that take them from it.
absl::Status RangeFromData(const Matrix& m, Header* h) {
  float min_value = 0, max_value = 0;
  ScanExtremes(m, &min_value, &max_value);
  if (!std::isfinite(min_value) || !std::isfinite(max_value)) {
    return absl::InvalidArgumentError(
        "cannot compress a matrix holding infinities with a data-driven method (Kaldi refuses)");
  }
  // A constant matrix: widen to 1 + |min|, the sum taken in double as Kaldi's 1.0 makes it.
  if (max_value == min_value) {
    const double min_d = min_value;
    max_value = static_cast<float>(min_d + (1.0 + std::fabs(min_d)));
  }
  h->min_value = min_value;
  h->range = max_value - min_value;
  if (!std::isfinite(h->range)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot compress a matrix whose range overflows a float (min ", min_value,
                     ", max ", max_value, "): Kaldi would write codes that decode to NaN"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Header> ComputeHeader(const Matrix& m, CompressionMethod method) {
  if (std::any_of(m.data.begin(), m.data.end(), [](float x) { return std::isnan(x); })) {
    return absl::InvalidArgumentError("cannot compress a matrix holding NaN");
  }
  Header h;
  h.rows = m.rows;
  h.cols = m.cols;
  switch (method) {
    case CompressionMethod::kAutomatic:
    case CompressionMethod::kSpeechFeature:
    case CompressionMethod::kTwoByteAuto:
    case CompressionMethod::kOneByteAuto:
      GMM_RETURN_IF_ERROR(RangeFromData(m, &h));
      return h;
    case CompressionMethod::kTwoByteSignedInteger:
      h.min_value = -32768.0f;
      h.range = 65535.0f;
      return h;
    case CompressionMethod::kOneByteUnsignedInteger:
      h.min_value = 0.0f;
      h.range = 255.0f;
      return h;
    case CompressionMethod::kOneByteZeroOne:
      h.min_value = 0.0f;
      h.range = 1.0f;
      return h;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown compression method ", static_cast<int32_t>(method)));
}

// A value's linear code, 0..levels (levels 65535 or 255): its place in [min, min + range]
// clamped to [0, 1], scaled in float, then rounded by adding 0.499 in double and truncating.
int32_t LinearCode(const Header& h, float value, float levels) {
  float f = (value - h.min_value) / h.range;
  if (f > 1.0f) f = 1.0f;
  if (f < 0.0f) f = 0.0f;
  return TruncateAsX86(static_cast<double>(f * levels) + 0.499);
}

uint16_t Uint16Code(const Header& h, float value) {
  return static_cast<uint16_t>(LinearCode(h, value, 65535.0f));
}

float Uint16Value(const Header& h, uint16_t code) {
  return h.min_value + h.range * kUint16Step * static_cast<float>(code);
}

void AppendBytes(std::string* out, const void* data, size_t bytes) {
  out->append(static_cast<const char*>(data), bytes);
}

// "CM2" and "CM3": each value's code, row-major, as T.
template <typename T>
void AppendLinearCodes(const Matrix& m, const Header& h, float levels, std::string* out) {
  std::vector<T> codes(m.data.size());
  for (size_t i = 0; i < codes.size(); ++i) {
    codes[i] = static_cast<T>(LinearCode(h, m.data[i], levels));
  }
  AppendBytes(out, codes.data(), codes.size() * sizeof(T));
}

// Where in a column sorted ascending the four percentiles are read: for fewer than 5 rows the
// first four sorted values, of which those at or past the end are missing.
std::array<int32_t, 4> PercentilePositions(int32_t rows) {
  if (rows < 5) return {0, 1, 2, 3};
  const int32_t quarter = rows / 4;
  return {0, quarter, 3 * quarter, rows - 1};
}

// Puts the column's order statistics at `positions` in place (the rest of it in no useful order).
void SelectOrderStatistics(const std::array<int32_t, 4>& positions, std::vector<float>* column) {
  auto begin = column->begin(), end = column->end();
  if (column->size() < 5) {
    std::sort(begin, end);
    return;
  }
  // Each selection partitions, so the later ones search only the part above the earlier ones.
  std::nth_element(begin, begin + positions[1], end);
  std::nth_element(begin, begin + positions[0], begin + positions[1]);
  std::nth_element(begin + positions[1] + 1, begin + positions[2], end);
  std::nth_element(begin + positions[2] + 1, begin + positions[3], end);
}

// The four percentile codes of a column (a copy: the selection reorders it): each at least one
// above the previous, and the first three at most 65532, 65533, 65534 so that there is room
// above them.
std::array<uint16_t, 4> PercentileCodes(const Header& h, std::vector<float> column) {
  const int32_t rows = static_cast<int32_t>(column.size());
  const std::array<int32_t, 4> positions = PercentilePositions(rows);
  SelectOrderStatistics(positions, &column);
  std::array<uint16_t, 4> codes{};
  for (int k = 0; k < 4; ++k) {
    const int32_t above_previous = k == 0 ? 0 : codes[k - 1] + 1;
    int32_t code = above_previous;  // a missing percentile (fewer than 4 rows)
    if (positions[k] < rows) code = std::max<int32_t>(Uint16Code(h, column[positions[k]]), code);
    if (k < 3) code = std::min(code, 65532 + k);
    codes[k] = static_cast<uint16_t>(code);
  }
  return codes;
}

// One byte code in [first, last]: the value's place in [lo, hi] times `steps`, in float, rounded
// by adding 0.5 in double and truncating.
uint8_t IntervalCode(float value, float lo, float hi, float steps, int32_t first, int32_t last) {
  const float f = (value - lo) / (hi - lo);
  const int64_t code = first + int64_t{TruncateAsX86(static_cast<double>(f * steps) + 0.5)};
  return static_cast<uint8_t>(std::clamp<int64_t>(code, first, last));
}

// A value's byte in a column with percentile values p (0th, 25th, 75th, 100th).
uint8_t ColumnByte(const std::array<float, 4>& p, float value) {
  if (value < p[1]) return IntervalCode(value, p[0], p[1], 64.0f, 0, 64);
  if (value < p[2]) return IntervalCode(value, p[1], p[2], 128.0f, 64, 192);
  return IntervalCode(value, p[2], p[3], 63.0f, 192, 255);
}

// "CM": every column's percentile codes, then every column's bytes.
void AppendColumnCodes(const Matrix& m, const Header& h, std::string* out) {
  std::vector<std::array<uint16_t, 4>> headers(m.cols);
  std::vector<uint8_t> bytes(m.data.size());
  std::vector<float> column(m.rows);
  for (int32_t c = 0; c < m.cols; ++c) {
    for (int32_t r = 0; r < m.rows; ++r) column[r] = m.at(r, c);
    headers[c] = PercentileCodes(h, column);
    std::array<float, 4> p;
    for (int k = 0; k < 4; ++k) p[k] = Uint16Value(h, headers[c][k]);
    uint8_t* out_column = bytes.data() + size_t(c) * m.rows;
    for (int32_t r = 0; r < m.rows; ++r) out_column[r] = ColumnByte(p, column[r]);
  }
  AppendBytes(out, headers.data(), headers.size() * sizeof(headers[0]));
  AppendBytes(out, bytes.data(), bytes.size());
}

// Kaldi's form of an empty matrix: the whole 20-byte GlobalHeader, format word included (Kaldi
// leaves it unset; 0 here), all else zero.
std::string EmptyObject() {
  std::string out = "CM ";
  out.append(20, '\0');
  return out;
}

}  // namespace

absl::StatusOr<CompressionMethod> ParseCompressionMethod(int value) {
  if (value < 1 || value > 7) {
    return absl::InvalidArgumentError(
        absl::StrCat("compression method ", value, " is not one of Kaldi's 1..7"));
  }
  return static_cast<CompressionMethod>(value);
}

absl::StatusOr<std::string> CompressMatrix(const Matrix& m, CompressionMethod method) {
  if (m.rows < 0 || m.cols < 0 || m.data.size() != size_t(m.rows) * size_t(m.cols)) {
    return absl::InvalidArgumentError(
        absl::StrCat("a ", m.rows, " x ", m.cols, " matrix with ", m.data.size(), " values"));
  }
  if (m.rows == 0 || m.cols == 0) return EmptyObject();
  GMM_ASSIGN_OR_RETURN(const Header h, ComputeHeader(m, method));
  const Layout layout = LayoutOf(method, m.rows);
  std::string out = absl::StrCat(TokenOf(layout), " ");
  AppendBytes(&out, &h, sizeof(h));
  switch (layout) {
    case Layout::kColumnHeaders:
      AppendColumnCodes(m, h, &out);
      break;
    case Layout::kTwoByte:
      AppendLinearCodes<uint16_t>(m, h, 65535.0f, &out);
      break;
    case Layout::kOneByte:
      AppendLinearCodes<uint8_t>(m, h, 255.0f, &out);
      break;
  }
  return out;
}

absl::Status WriteCompressedMatrix(const Matrix& m, CompressionMethod method, std::ostream& os,
                                   bool binary) {
  GMM_ASSIGN_OR_RETURN(const std::string bytes, CompressMatrix(m, method));
  if (binary) {
    os.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  } else {
    // The values Kaldi's tools would see: the object decoded by the reader.
    Matrix decoded;
    if (m.rows > 0 && m.cols > 0) {
      std::istringstream is(bytes);
      KaldiReader reader(is, "a compressed matrix", /*binary=*/true);
      GMM_ASSIGN_OR_RETURN(decoded, reader.FloatMatrix());
    }
    KaldiWriter(os, /*binary=*/false).FloatMatrix(decoded);
  }
  if (!os) return absl::DataLossError("writing a compressed matrix failed");
  return absl::OkStatus();
}

}  // namespace gmmscore

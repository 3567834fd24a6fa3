#include "formats/kaldi_io.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "formats/read_limits.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// What a stream of unknown size is read in: a length that lies costs at most this beyond the data.
constexpr uint64_t kChunkBytes = uint64_t{1} << 20;
// Binary vectors and integer vectors: 2^28 values.
constexpr uint64_t kMaxVectorValues = uint64_t{1} << 28;

bool ParseNumber(const std::string& word, float* out) { return absl::SimpleAtof(word, out); }
bool ParseNumber(const std::string& word, double* out) { return absl::SimpleAtod(word, out); }

// Parses a text number as Kaldi writes it, including inf/-inf/nan spellings.
template <typename T>
bool ParseReal(const std::string& word, T* out) {
  if (ParseNumber(word, out)) return true;
  if (word == "inf" || word == "Inf" || word == "INF")
    *out = std::numeric_limits<T>::infinity();
  else if (word == "-inf" || word == "-Inf" || word == "-INF")
    *out = -std::numeric_limits<T>::infinity();
  else if (word == "nan" || word == "NaN" || word == "-nan")
    *out = std::numeric_limits<T>::quiet_NaN();
  else
    return false;
  return true;
}

// Kaldi's binary tokens for float and double vectors and matrices.
template <typename T>
constexpr const char* kVectorToken = sizeof(T) == 4 ? "FV" : "DV";

}  // namespace

bool KaldiReader::ConsumeBinaryMarker(std::istream& is) {
  if (is.peek() != '\0') return false;
  is.get();
  if (is.peek() != 'B') {
    is.unget();
    return false;
  }
  is.get();
  return true;
}

int64_t KaldiReader::offset() {
  const auto pos = is_.tellg();
  if (pos < 0) {
    is_.clear();
    return -1;
  }
  return static_cast<int64_t>(pos);
}

absl::Status KaldiReader::Error(absl::string_view what) {
  const int64_t off = offset();
  if (off < 0) return absl::InvalidArgumentError(absl::StrCat(name_, ": ", what));
  return absl::InvalidArgumentError(absl::StrCat(name_, ": byte ", off, ": ", what));
}

std::optional<uint64_t> KaldiReader::BytesLeft() {
  if (end_ == kEndUnknown) return std::nullopt;
  if (is_.eof()) return 0;  // the stream has already seen its end
  std::streambuf* buf = is_.rdbuf();
  if (buf == nullptr) return std::nullopt;
  const std::streamoff here = buf->pubseekoff(0, std::ios::cur, std::ios::in);
  if (here < 0) {
    end_ = kEndUnknown;
    return std::nullopt;
  }
  if (end_ == kEndNotAsked) {
    const std::streamoff end = buf->pubseekoff(0, std::ios::end, std::ios::in);
    if (end < 0 || buf->pubseekpos(here, std::ios::in) != here) {
      buf->pubseekpos(here, std::ios::in);
      end_ = kEndUnknown;
      return std::nullopt;
    }
    end_ = end;
  }
  return end_ > here ? static_cast<uint64_t>(end_ - here) : 0;
}

absl::Status KaldiReader::CheckRoom(uint64_t count, uint64_t min_bytes_each, uint64_t max_count,
                                    absl::string_view what) {
  if (count > max_count) {
    return Error(absl::StrCat(count, " ", what, " is more than the ", max_count, " allowed"));
  }
  uint64_t bytes = 0;
  if (!CheckedMul(count, min_bytes_each, &bytes)) {
    return Error(absl::StrCat(count, " ", what, " cannot fit in any file"));
  }
  const std::optional<uint64_t> left = BytesLeft();
  if (left.has_value() && bytes > *left) {
    return Error(absl::StrCat(count, " ", what, " take at least ", bytes, " bytes, the file has ",
                              *left, " left"));
  }
  return absl::OkStatus();
}

absl::Status KaldiReader::ReadRaw(void* dst, size_t bytes, absl::string_view what) {
  is_.read(static_cast<char*>(dst), static_cast<std::streamsize>(bytes));
  if (static_cast<size_t>(is_.gcount()) != bytes) {
    is_.clear();
    return Error(absl::StrCat("file ends inside ", what));
  }
  return absl::OkStatus();
}

absl::Status KaldiReader::CheckObjectBytes(uint64_t values, uint64_t bytes, absl::string_view what,
                                           absl::string_view shape) {
  if (values > kMaxKaldiObjectValues) {
    return Error(absl::StrCat(what, " of ", shape, " values is larger than the ",
                              kMaxKaldiObjectValues, " values allowed"));
  }
  const std::optional<uint64_t> left = BytesLeft();
  if (left.has_value() && bytes > *left) {
    return Error(absl::StrCat("file ends inside ", what, ": its ", shape, " values take ", bytes,
                              " bytes, the file has ", *left, " left"));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status KaldiReader::ReadArray(uint64_t count, std::vector<T>* out, absl::string_view what,
                                    absl::string_view shape) {
  GMM_RETURN_IF_ERROR(CheckObjectBytes(count, count * sizeof(T), what, shape));
  out->clear();
  if (BytesLeft().has_value()) {  // checked against the bytes left: size it at once
    out->resize(count);
    return ReadRaw(out->data(), count * sizeof(T), what);
  }
  // A pipe: grow with the data, so that a count that lies fails where the data ends.
  constexpr uint64_t kChunk = kChunkBytes / sizeof(T);
  while (out->size() < count) {
    const size_t had = out->size();
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, count - had));
    out->resize(had + n);
    is_.read(reinterpret_cast<char*>(out->data() + had),
             static_cast<std::streamsize>(n * sizeof(T)));
    if (static_cast<size_t>(is_.gcount()) != n * sizeof(T)) {
      const size_t present = had + static_cast<size_t>(is_.gcount()) / sizeof(T);
      is_.clear();
      return Error(absl::StrCat("file ends inside ", what, " (", shape, " values announced, ",
                                present, " present)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> KaldiReader::BoundedWord(absl::string_view what) {
  is_ >> std::ws;
  std::string word;
  if (is_) {
    std::streambuf* buf = is_.rdbuf();
    for (int c = buf->sgetc(); c != EOF && !std::isspace(c); c = buf->snextc()) {
      if (word.size() == kMaxKaldiTokenBytes) {
        return Error(absl::StrCat(what, " longer than ", kMaxKaldiTokenBytes,
                                  " bytes: ", word.substr(0, 40), "..."));
      }
      word.push_back(static_cast<char>(c));
    }
  }
  if (word.empty()) {
    is_.clear();
    return Error(absl::StrCat("unexpected end of file while reading ", what));
  }
  return word;
}

absl::StatusOr<std::string> KaldiReader::Word() { return BoundedWord("a word"); }

absl::StatusOr<std::string> KaldiReader::PeekWord() {
  const auto pos = is_.tellg();
  GMM_ASSIGN_OR_RETURN(std::string word, Word());
  is_.seekg(pos);
  return word;
}

absl::StatusOr<std::string> KaldiReader::Token() {
  GMM_ASSIGN_OR_RETURN(std::string token, BoundedWord("a token"));
  if (!std::isspace(is_.peek())) return Error(absl::StrCat("expected a space after token ", token));
  is_.get();
  return token;
}

absl::Status KaldiReader::Expect(absl::string_view expected) {
  const int64_t start = offset();
  GMM_ASSIGN_OR_RETURN(std::string token, Token());
  if (token != expected) {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": byte ", start, ": expected ", expected,
                                                   ", found ", token.substr(0, 40)));
  }
  return absl::OkStatus();
}

absl::StatusOr<int32_t> KaldiReader::Int32() {
  if (binary_) {
    char size = 0;
    GMM_RETURN_IF_ERROR(ReadRaw(&size, 1, "an integer"));
    if (size != 4)
      return Error(absl::StrCat("expected a 4-byte integer, size byte is ", int(size)));
    int32_t v = 0;
    GMM_RETURN_IF_ERROR(ReadRaw(&v, 4, "an integer"));
    return v;
  }
  GMM_ASSIGN_OR_RETURN(std::string word, Word());
  int32_t v = 0;
  if (!absl::SimpleAtoi(word, &v)) return Error(absl::StrCat("expected an integer, found ", word));
  return v;
}

absl::StatusOr<float> KaldiReader::Float() {
  if (binary_) {
    char size = 0;
    GMM_RETURN_IF_ERROR(ReadRaw(&size, 1, "a number"));
    if (size == 4) {
      float f = 0;
      GMM_RETURN_IF_ERROR(ReadRaw(&f, 4, "a number"));
      return f;
    }
    if (size == 8) {
      double d = 0;
      GMM_RETURN_IF_ERROR(ReadRaw(&d, 8, "a number"));
      return static_cast<float>(d);
    }
    return Error(absl::StrCat("expected a float, size byte is ", int(size)));
  }
  GMM_ASSIGN_OR_RETURN(std::string word, Word());
  float f = 0;
  if (!ParseReal(word, &f)) return Error(absl::StrCat("expected a number, found ", word));
  return f;
}

absl::StatusOr<double> KaldiReader::Double() {
  if (binary_) {
    char size = 0;
    GMM_RETURN_IF_ERROR(ReadRaw(&size, 1, "a number"));
    if (size == 8) {
      double d = 0;
      GMM_RETURN_IF_ERROR(ReadRaw(&d, 8, "a number"));
      return d;
    }
    if (size == 4) {
      float f = 0;
      GMM_RETURN_IF_ERROR(ReadRaw(&f, 4, "a number"));
      return f;
    }
    return Error(absl::StrCat("expected a double, size byte is ", int(size)));
  }
  GMM_ASSIGN_OR_RETURN(std::string word, Word());
  double d = 0;
  if (!ParseReal(word, &d)) return Error(absl::StrCat("expected a number, found ", word));
  return d;
}

absl::StatusOr<uint16_t> KaldiReader::Uint16() {
  if (binary_) {
    char size = 0;
    GMM_RETURN_IF_ERROR(ReadRaw(&size, 1, "an integer"));
    if (size != -2) {
      return Error(absl::StrCat("expected an unsigned 2-byte integer, size byte is ", int(size)));
    }
    uint16_t v = 0;
    GMM_RETURN_IF_ERROR(ReadRaw(&v, 2, "an integer"));
    return v;
  }
  GMM_ASSIGN_OR_RETURN(std::string word, Word());
  uint32_t v = 0;
  if (!absl::SimpleAtoi(word, &v) || v > 0xFFFF) {
    return Error(absl::StrCat("expected an unsigned 16-bit integer, found ", word.substr(0, 40)));
  }
  return static_cast<uint16_t>(v);
}

absl::StatusOr<std::vector<int32_t>> KaldiReader::Int32Vector() {
  return CatchAllocation(name_, [&] { return Int32VectorImpl(); });
}

absl::StatusOr<std::vector<int32_t>> KaldiReader::Int32VectorImpl() {
  std::vector<int32_t> v;
  if (binary_) {
    char size = 0;
    GMM_RETURN_IF_ERROR(ReadRaw(&size, 1, "an integer vector"));
    if (size != 4) return Error("expected a vector of 4-byte integers");
    int32_t n = 0;
    GMM_RETURN_IF_ERROR(ReadRaw(&n, 4, "an integer vector"));
    if (n < 0 || uint64_t(n) > kMaxVectorValues) {
      return Error(absl::StrCat("bad integer vector length ", n));
    }
    GMM_RETURN_IF_ERROR(ReadArray(uint64_t(n), &v, "an integer vector", absl::StrCat(n)));
    return v;
  }
  GMM_ASSIGN_OR_RETURN(std::string open, Word());
  if (open != "[") return Error(absl::StrCat("expected [, found ", open));
  while (true) {
    GMM_ASSIGN_OR_RETURN(std::string word, Word());
    if (word == "]") break;
    int32_t x = 0;
    if (!absl::SimpleAtoi(word, &x))
      return Error(absl::StrCat("expected an integer, found ", word));
    v.push_back(x);
  }
  return v;
}

template <typename T>
absl::StatusOr<std::vector<T>> KaldiReader::TextRealsInBrackets(bool matrix, int32_t* rows) {
  GMM_ASSIGN_OR_RETURN(std::string open, Word());
  if (open != "[") return Error(absl::StrCat("expected [, found ", open.substr(0, 40)));
  std::vector<T> values;
  int32_t num_rows = 0;
  size_t cols = 0;
  size_t row_start = 0;
  // In a text matrix each row is on its own line; track newlines to learn the row length.
  bool in_row = false;
  while (true) {
    int c = is_.peek();
    while (c != EOF && std::isspace(c)) {
      is_.get();
      if (c == '\n' && matrix && in_row) {
        const size_t n = values.size() - row_start;
        if (num_rows == 0)
          cols = n;
        else if (n != cols)
          return Error(absl::StrCat("matrix row ", num_rows, " has ", n,
                                    " values, the first row has ", cols));
        ++num_rows;
        row_start = values.size();
        in_row = false;
      }
      c = is_.peek();
    }
    GMM_ASSIGN_OR_RETURN(std::string word, Word());
    if (word == "]") break;
    T x = 0;
    if (!ParseReal(word, &x))
      return Error(absl::StrCat("expected a number or ], found ", word.substr(0, 40)));
    values.push_back(x);
    in_row = true;
  }
  if (matrix && in_row) {  // the last row ends with "]" on the same line
    const size_t n = values.size() - row_start;
    if (num_rows > 0 && n != cols) {
      return Error(
          absl::StrCat("matrix row ", num_rows, " has ", n, " values, the first row has ", cols));
    }
    ++num_rows;
  }
  if (rows != nullptr) *rows = num_rows;
  return values;
}

absl::StatusOr<std::vector<float>> KaldiReader::FloatVector() {
  return CatchAllocation(name_, [&] { return RealVectorImpl<float>(); });
}

absl::StatusOr<std::vector<double>> KaldiReader::DoubleVector() {
  return CatchAllocation(name_, [&] { return RealVectorImpl<double>(); });
}

template <typename T>
absl::StatusOr<std::vector<T>> KaldiReader::RealVectorImpl() {
  if (!binary_) return TextRealsInBrackets<T>(false, nullptr);
  GMM_ASSIGN_OR_RETURN(std::string token, Token());
  if (token != "FV" && token != "DV")
    return Error(absl::StrCat("expected FV or DV, found ", token.substr(0, 40)));
  GMM_ASSIGN_OR_RETURN(int32_t n, Int32());
  if (n < 0 || uint64_t(n) > kMaxVectorValues) return Error(absl::StrCat("bad vector length ", n));
  const char* what = token == "FV" ? "a float vector" : "a double vector";
  std::vector<T> v;
  if (token == kVectorToken<T>) {
    GMM_RETURN_IF_ERROR(ReadArray(uint64_t(n), &v, what, absl::StrCat(n)));
    return v;
  }
  using Other = std::conditional_t<sizeof(T) == 4, double, float>;
  std::vector<Other> other;
  GMM_RETURN_IF_ERROR(ReadArray(uint64_t(n), &other, what, absl::StrCat(n)));
  v.resize(other.size());
  for (size_t i = 0; i < other.size(); ++i) v[i] = static_cast<T>(other[i]);
  return v;
}

absl::StatusOr<Matrix> KaldiReader::FloatMatrix() {
  return CatchAllocation(name_, [&] { return FloatMatrixImpl(); });
}

absl::StatusOr<Matrix> KaldiReader::FloatMatrixImpl() {
  Matrix m;
  if (!binary_) {
    int32_t rows = 0;
    GMM_ASSIGN_OR_RETURN(m.data, TextRealsInBrackets<float>(true, &rows));
    m.rows = rows;
    m.cols = rows == 0 ? 0 : static_cast<int32_t>(m.data.size() / rows);
    return m;
  }
  GMM_ASSIGN_OR_RETURN(std::string token, Token());
  if (token == "CM") return CompressedMatrix(1);
  if (token == "CM2") return CompressedMatrix(2);
  if (token == "CM3") return CompressedMatrix(3);
  if (token != "FM" && token != "DM") {
    return Error(
        absl::StrCat("expected a matrix (FM, DM, CM, CM2, CM3), found ", token.substr(0, 40)));
  }
  GMM_ASSIGN_OR_RETURN(m.data, FullMatrixValues<float>(token, &m.rows, &m.cols));
  return m;
}

absl::StatusOr<std::vector<double>> KaldiReader::DoubleMatrix(int32_t* rows, int32_t* cols) {
  return CatchAllocation(name_, [&]() -> absl::StatusOr<std::vector<double>> {
    if (!binary_) {
      GMM_ASSIGN_OR_RETURN(std::vector<double> values, TextRealsInBrackets<double>(true, rows));
      *cols = *rows == 0 ? 0 : static_cast<int32_t>(values.size() / *rows);
      return values;
    }
    GMM_ASSIGN_OR_RETURN(std::string token, Token());
    if (token != "FM" && token != "DM") {
      return Error(absl::StrCat("expected a full matrix (FM or DM), found ", token.substr(0, 40)));
    }
    return FullMatrixValues<double>(token, rows, cols);
  });
}

template <typename T>
absl::StatusOr<std::vector<T>> KaldiReader::FullMatrixValues(const std::string& token,
                                                             int32_t* rows, int32_t* cols) {
  GMM_ASSIGN_OR_RETURN(const int32_t r, Int32());
  GMM_ASSIGN_OR_RETURN(const int32_t c, Int32());
  if (r < 0 || c < 0) return Error(absl::StrCat("bad matrix size ", r, " x ", c));
  const uint64_t n = uint64_t(r) * uint64_t(c);  // < 2^62
  const std::string shape = absl::StrCat(r, " x ", c);
  std::vector<T> values;
  const char* what = token == "FM" ? "a float matrix" : "a double matrix";
  if ((token == "FM") == (sizeof(T) == 4)) {
    GMM_RETURN_IF_ERROR(ReadArray(n, &values, what, shape));
  } else {
    using Other = std::conditional_t<sizeof(T) == 4, double, float>;
    std::vector<Other> other;
    GMM_RETURN_IF_ERROR(ReadArray(n, &other, what, shape));
    values.resize(other.size());
    for (size_t i = 0; i < other.size(); ++i) values[i] = static_cast<T>(other[i]);
  }
  *rows = r;
  *cols = c;
  return values;
}

// Kaldi's CompressedMatrix: a global header (min, range, rows, cols), then either per-column
// percentile headers and one byte per value column-major ("CM"), or two bytes ("CM2") or one
// byte ("CM3") per value row-major, each a linear code between min and min + range.
absl::StatusOr<Matrix> KaldiReader::CompressedMatrix(int format) {
  struct {
    float min_value;
    float range;
    int32_t rows;
    int32_t cols;
  } header;
  GMM_RETURN_IF_ERROR(ReadRaw(&header, sizeof(header), "a compressed matrix header"));
  if (header.rows < 0 || header.cols < 0) {
    return Error(absl::StrCat("bad compressed matrix size ", header.rows, " x ", header.cols));
  }
  const uint64_t n = uint64_t(header.rows) * uint64_t(header.cols);  // < 2^62
  const std::string shape = absl::StrCat(header.rows, " x ", header.cols);
  // The data of all three formats, column headers included, before anything is sized.
  const uint64_t data_bytes = format == 1 ? 8 * uint64_t(header.cols) + n : format == 2 ? 2 * n : n;
  GMM_RETURN_IF_ERROR(CheckObjectBytes(n, data_bytes, "a compressed matrix", shape));
  // The arithmetic is Kaldi's (CompressedMatrix::CopyToMat), float and double where it uses
  // each, so that the values are the ones Kaldi's tools see, to the bit.
  Matrix m;
  auto decode16 = [&](uint16_t v) {
    return header.min_value + header.range * (1.0f / 65535.0f) * static_cast<float>(v);
  };
  if (format == 1) {
    std::vector<uint16_t> col_headers;
    GMM_RETURN_IF_ERROR(ReadArray(4 * uint64_t(header.cols), &col_headers,
                                  "compressed column headers",
                                  absl::StrCat(4, " x ", header.cols)));
    std::vector<uint8_t> bytes;
    GMM_RETURN_IF_ERROR(ReadArray(n, &bytes, "a compressed matrix", shape));
    m.Resize(header.rows, header.cols);
    for (int32_t c = 0; c < header.cols; ++c) {
      const float p0 = decode16(col_headers[c * 4]), p25 = decode16(col_headers[c * 4 + 1]),
                  p75 = decode16(col_headers[c * 4 + 2]), p100 = decode16(col_headers[c * 4 + 3]);
      for (int32_t r = 0; r < header.rows; ++r) {
        const uint8_t v = bytes[size_t(c) * header.rows + r];
        double x;  // a float product scaled and added in double, as Kaldi's CharToFloat
        if (v <= 64)
          x = p0 + static_cast<double>((p25 - p0) * static_cast<float>(v)) * (1 / 64.0);
        else if (v <= 192)
          x = p25 + static_cast<double>((p75 - p25) * static_cast<float>(v - 64)) * (1 / 128.0);
        else
          x = p75 + static_cast<double>((p100 - p75) * static_cast<float>(v - 192)) * (1 / 63.0);
        m.at(r, c) = static_cast<float>(x);
      }
    }
  } else if (format == 2) {
    std::vector<uint16_t> codes;
    GMM_RETURN_IF_ERROR(ReadArray(n, &codes, "a compressed matrix", shape));
    m.Resize(header.rows, header.cols);
    const float increment = static_cast<float>(header.range * (1.0 / 65535.0));
    for (size_t i = 0; i < n; ++i) {
      m.data[i] = header.min_value + static_cast<float>(codes[i]) * increment;
    }
  } else {
    std::vector<uint8_t> codes;
    GMM_RETURN_IF_ERROR(ReadArray(n, &codes, "a compressed matrix", shape));
    m.Resize(header.rows, header.cols);
    const float increment = static_cast<float>(header.range * (1.0 / 255.0));
    for (size_t i = 0; i < n; ++i) {
      m.data[i] = header.min_value + static_cast<float>(codes[i]) * increment;
    }
  }
  return m;
}

void KaldiWriter::Token(absl::string_view token) { os_ << token << ' '; }

void KaldiWriter::Int32(int32_t value) {
  if (binary_) {
    os_.put(4);
    os_.write(reinterpret_cast<const char*>(&value), 4);
  } else {
    os_ << value << ' ';
  }
}

template <typename T>
void KaldiWriter::TextReal(T value) {
  char buf[32];
  if (reals_ == TextReals::kKaldi) {
    const int n = std::snprintf(buf, sizeof(buf), "%.7g", static_cast<double>(value));
    os_.write(buf, n);
    return;
  }
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  os_.write(buf, end - buf);
}

void KaldiWriter::Uint16(uint16_t value) {
  if (binary_) {
    os_.put(static_cast<char>(-2));  // Kaldi marks unsigned types with a negative size
    os_.write(reinterpret_cast<const char*>(&value), 2);
  } else {
    os_ << value << ' ';
  }
}

void KaldiWriter::Double(double value) {
  if (binary_) {
    os_.put(8);
    os_.write(reinterpret_cast<const char*>(&value), 8);
  } else {
    TextReal(value);
    os_ << ' ';
  }
}

void KaldiWriter::Float(float value) {
  if (binary_) {
    os_.put(4);
    os_.write(reinterpret_cast<const char*>(&value), 4);
  } else {
    TextReal(value);
    os_ << ' ';
  }
}

void KaldiWriter::Int32Vector(const std::vector<int32_t>& v) {
  if (binary_) {
    os_.put(4);
    const int32_t n = static_cast<int32_t>(v.size());
    os_.write(reinterpret_cast<const char*>(&n), 4);
    os_.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * 4));
  } else {
    os_ << "[ ";
    for (int32_t x : v) os_ << x << ' ';
    os_ << "]\n";
  }
}

template <typename T>
void KaldiWriter::RealVector(const T* data, size_t n) {
  if (binary_) {
    Token(kVectorToken<T>);
    Int32(static_cast<int32_t>(n));
    os_.write(reinterpret_cast<const char*>(data), std::streamsize(n * sizeof(T)));
  } else {
    os_ << " [ ";
    for (size_t i = 0; i < n; ++i) {
      TextReal(data[i]);
      os_ << ' ';
    }
    os_ << "]\n";
  }
}

void KaldiWriter::FloatVector(const float* data, size_t n) { RealVector(data, n); }
void KaldiWriter::DoubleVector(const double* data, size_t n) { RealVector(data, n); }

template <typename T>
void KaldiWriter::RealMatrix(const char* token, int32_t rows, int32_t cols, const T* data) {
  if (binary_) {
    Token(token);
    Int32(rows);
    Int32(cols);
    os_.write(reinterpret_cast<const char*>(data),
              std::streamsize(size_t(rows) * size_t(cols) * sizeof(T)));
    return;
  }
  if (cols == 0) {  // Kaldi's text form of an empty matrix
    os_ << " [ ]\n";
    return;
  }
  os_ << " [";
  for (int32_t r = 0; r < rows; ++r) {
    os_ << "\n  ";
    for (int32_t c = 0; c < cols; ++c) {
      TextReal(data[size_t(r) * cols + c]);
      os_ << ' ';
    }
  }
  os_ << "]\n";
}

void KaldiWriter::FloatMatrix(const Matrix& m) { RealMatrix("FM", m.rows, m.cols, m.data.data()); }

void KaldiWriter::DoubleMatrix(int32_t rows, int32_t cols, const double* data) {
  RealMatrix("DM", rows, cols, data);
}

}  // namespace gmmscore

#include "formats/kaldi_io.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// Parses a text float as Kaldi writes it, including inf/-inf/nan spellings.
bool ParseFloat(const std::string& word, float* out) {
  if (absl::SimpleAtof(word, out)) return true;
  if (word == "inf" || word == "Inf" || word == "INF")
    *out = std::numeric_limits<float>::infinity();
  else if (word == "-inf" || word == "-Inf" || word == "-INF")
    *out = -std::numeric_limits<float>::infinity();
  else if (word == "nan" || word == "NaN" || word == "-nan")
    *out = std::numeric_limits<float>::quiet_NaN();
  else
    return false;
  return true;
}

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

absl::Status KaldiReader::ReadRaw(void* dst, size_t bytes, absl::string_view what) {
  is_.read(static_cast<char*>(dst), static_cast<std::streamsize>(bytes));
  if (static_cast<size_t>(is_.gcount()) != bytes) {
    is_.clear();
    return Error(absl::StrCat("file ends inside ", what));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> KaldiReader::Word() {
  is_ >> std::ws;
  std::string word;
  if (!(is_ >> word)) {
    is_.clear();
    return Error("unexpected end of file");
  }
  return word;
}

absl::StatusOr<std::string> KaldiReader::PeekWord() {
  const auto pos = is_.tellg();
  GMM_ASSIGN_OR_RETURN(std::string word, Word());
  is_.seekg(pos);
  return word;
}

absl::StatusOr<std::string> KaldiReader::Token() {
  if (!binary_) is_ >> std::ws;
  std::string token;
  if (!(is_ >> token)) {
    is_.clear();
    return Error("unexpected end of file while reading a token");
  }
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
  if (!ParseFloat(word, &f)) return Error(absl::StrCat("expected a number, found ", word));
  return f;
}

absl::StatusOr<std::vector<int32_t>> KaldiReader::Int32Vector() {
  std::vector<int32_t> v;
  if (binary_) {
    char size = 0;
    GMM_RETURN_IF_ERROR(ReadRaw(&size, 1, "an integer vector"));
    if (size != 4) return Error("expected a vector of 4-byte integers");
    int32_t n = 0;
    GMM_RETURN_IF_ERROR(ReadRaw(&n, 4, "an integer vector"));
    if (n < 0 || n > (1 << 28)) return Error(absl::StrCat("bad integer vector length ", n));
    v.resize(n);
    GMM_RETURN_IF_ERROR(ReadRaw(v.data(), size_t(n) * 4, "an integer vector"));
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

absl::StatusOr<std::vector<float>> KaldiReader::TextFloatsInBrackets(bool matrix, int32_t* rows) {
  GMM_ASSIGN_OR_RETURN(std::string open, Word());
  if (open != "[") return Error(absl::StrCat("expected [, found ", open.substr(0, 40)));
  std::vector<float> values;
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
    float f = 0;
    if (!ParseFloat(word, &f))
      return Error(absl::StrCat("expected a number or ], found ", word.substr(0, 40)));
    values.push_back(f);
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
  if (!binary_) return TextFloatsInBrackets(false, nullptr);
  GMM_ASSIGN_OR_RETURN(std::string token, Token());
  if (token != "FV" && token != "DV")
    return Error(absl::StrCat("expected FV or DV, found ", token));
  GMM_ASSIGN_OR_RETURN(int32_t n, Int32());
  if (n < 0 || n > (1 << 28)) return Error(absl::StrCat("bad vector length ", n));
  std::vector<float> v(n);
  if (token == "FV") {
    GMM_RETURN_IF_ERROR(ReadRaw(v.data(), size_t(n) * 4, "a float vector"));
  } else {
    std::vector<double> d(n);
    GMM_RETURN_IF_ERROR(ReadRaw(d.data(), size_t(n) * 8, "a double vector"));
    for (int32_t i = 0; i < n; ++i) v[i] = static_cast<float>(d[i]);
  }
  return v;
}

absl::StatusOr<Matrix> KaldiReader::FloatMatrix() {
  Matrix m;
  if (!binary_) {
    int32_t rows = 0;
    GMM_ASSIGN_OR_RETURN(m.data, TextFloatsInBrackets(true, &rows));
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
  GMM_ASSIGN_OR_RETURN(int32_t rows, Int32());
  GMM_ASSIGN_OR_RETURN(int32_t cols, Int32());
  if (rows < 0 || cols < 0 || int64_t(rows) * cols > (int64_t(1) << 31)) {
    return Error(absl::StrCat("bad matrix size ", rows, " x ", cols));
  }
  m.Resize(rows, cols);
  if (token == "FM") {
    GMM_RETURN_IF_ERROR(ReadRaw(m.data.data(), m.data.size() * 4, "a float matrix"));
  } else {
    std::vector<double> d(m.data.size());
    GMM_RETURN_IF_ERROR(ReadRaw(d.data(), d.size() * 8, "a double matrix"));
    for (size_t i = 0; i < d.size(); ++i) m.data[i] = static_cast<float>(d[i]);
  }
  return m;
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
  if (header.rows < 0 || header.cols < 0 ||
      int64_t(header.rows) * header.cols > (int64_t(1) << 31)) {
    return Error(absl::StrCat("bad compressed matrix size ", header.rows, " x ", header.cols));
  }
  Matrix m(header.rows, header.cols);
  const size_t n = m.data.size();
  auto decode16 = [&](uint16_t v) {
    return header.min_value + header.range * (1.0f / 65535.0f) * v;
  };
  if (format == 1) {
    std::vector<uint16_t> col_headers(size_t(header.cols) * 4);
    GMM_RETURN_IF_ERROR(
        ReadRaw(col_headers.data(), col_headers.size() * 2, "compressed column headers"));
    std::vector<uint8_t> bytes(n);
    GMM_RETURN_IF_ERROR(ReadRaw(bytes.data(), n, "compressed matrix data"));
    for (int32_t c = 0; c < header.cols; ++c) {
      const float p0 = decode16(col_headers[c * 4]), p25 = decode16(col_headers[c * 4 + 1]),
                  p75 = decode16(col_headers[c * 4 + 2]), p100 = decode16(col_headers[c * 4 + 3]);
      for (int32_t r = 0; r < header.rows; ++r) {
        const uint8_t v = bytes[size_t(c) * header.rows + r];
        float x;
        if (v <= 64)
          x = p0 + (p25 - p0) * v * (1.0f / 64.0f);
        else if (v <= 192)
          x = p25 + (p75 - p25) * (v - 64) * (1.0f / 128.0f);
        else
          x = p75 + (p100 - p75) * (v - 192) * (1.0f / 63.0f);
        m.at(r, c) = x;
      }
    }
  } else if (format == 2) {
    std::vector<uint16_t> codes(n);
    GMM_RETURN_IF_ERROR(ReadRaw(codes.data(), n * 2, "compressed matrix data"));
    for (size_t i = 0; i < n; ++i) m.data[i] = decode16(codes[i]);
  } else {
    std::vector<uint8_t> codes(n);
    GMM_RETURN_IF_ERROR(ReadRaw(codes.data(), n, "compressed matrix data"));
    for (size_t i = 0; i < n; ++i)
      m.data[i] = header.min_value + header.range * (1.0f / 255.0f) * codes[i];
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

namespace {
void WriteTextFloat(std::ostream& os, float value) {
  char buf[32];
  // Shortest representation that reads back to the same float.
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  os.write(buf, end - buf);
}
}  // namespace

void KaldiWriter::Float(float value) {
  if (binary_) {
    os_.put(4);
    os_.write(reinterpret_cast<const char*>(&value), 4);
  } else {
    WriteTextFloat(os_, value);
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

void KaldiWriter::FloatVector(const float* data, size_t n) {
  if (binary_) {
    Token("FV");
    Int32(static_cast<int32_t>(n));
    os_.write(reinterpret_cast<const char*>(data), std::streamsize(n * 4));
  } else {
    os_ << " [ ";
    for (size_t i = 0; i < n; ++i) {
      WriteTextFloat(os_, data[i]);
      os_ << ' ';
    }
    os_ << "]\n";
  }
}

void KaldiWriter::FloatMatrix(const Matrix& m) {
  if (binary_) {
    Token("FM");
    Int32(m.rows);
    Int32(m.cols);
    os_.write(reinterpret_cast<const char*>(m.data.data()), std::streamsize(m.data.size() * 4));
    return;
  }
  os_ << " [";
  for (int32_t r = 0; r < m.rows; ++r) {
    os_ << "\n  ";
    for (int32_t c = 0; c < m.cols; ++c) {
      WriteTextFloat(os_, m.at(r, c));
      os_ << ' ';
    }
  }
  os_ << "]\n";
}

}  // namespace gmmscore

// Kaldi's basic serialisation (src/base/io-funcs.cc, src/matrix/kaldi-vector.cc,
// kaldi-matrix.cc, compressed-matrix.cc): tokens, basic types, vectors and matrices, binary and
// text. The reader tracks the byte offset so every error names the file and the place.
//
// Hostile input: every length a binary object gives is checked against the bytes the stream has
// left, where that is knowable (a file or a string stream), and against kMaxKaldiObjectValues
// (formats/read_limits.h) before anything is sized by it; on a stream whose size is unknown (a
// pipe) the values are read in bounded chunks, so that a length that lies fails where the data
// ends, having allocated about what the data held. Tokens and text words are at most
// kMaxKaldiTokenBytes long. No exception leaves the vector and matrix readers: a failed
// allocation is RESOURCE_EXHAUSTED.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "util/matrix.h"

namespace gmmscore {

class KaldiReader {
 public:
  // `name` is what errors call the input (a file path, "stdin", an archive key...).
  KaldiReader(std::istream& is, std::string name, bool binary)
      : is_(is), name_(std::move(name)), binary_(binary) {}

  // Consumes the "\0B" binary marker if the stream starts with it; returns whether it did.
  static bool ConsumeBinaryMarker(std::istream& is);

  bool binary() const { return binary_; }
  void set_binary(bool binary) { binary_ = binary; }
  const std::string& name() const { return name_; }
  std::istream& stream() { return is_; }

  absl::StatusOr<std::string> Token();
  absl::Status Expect(absl::string_view token);
  absl::StatusOr<int32_t> Int32();
  // An unsigned 16-bit integer (Kaldi writes its size byte as -2).
  absl::StatusOr<uint16_t> Uint16();
  absl::StatusOr<float> Float();
  absl::StatusOr<double> Double();
  absl::StatusOr<std::vector<int32_t>> Int32Vector();
  absl::StatusOr<std::vector<float>> FloatVector();
  // Float ("FV") or double ("DV") vectors, kept in double (Kaldi's Vector<double>::Read).
  absl::StatusOr<std::vector<double>> DoubleVector();
  // Full, double ("DM") and compressed ("CM", "CM2", "CM3") matrices are all returned as float.
  absl::StatusOr<Matrix> FloatMatrix();
  // Full float ("FM") or double ("DM") matrices in double, row-major, with their shape.
  absl::StatusOr<std::vector<double>> DoubleMatrix(int32_t* rows, int32_t* cols);
  // Text mode: the next whitespace-delimited word without consuming it.
  absl::StatusOr<std::string> PeekWord();

  // The bytes between where the stream stands and its end, or nullopt where the stream cannot
  // tell (a pipe).
  std::optional<uint64_t> BytesLeft();
  // For a reader about to read `count` items of which each takes at least `min_bytes_each` bytes:
  // an error naming `what` where the stream has fewer bytes left than that (or count exceeds
  // `max_count`), so that the caller can size its containers by `count`.
  absl::Status CheckRoom(uint64_t count, uint64_t min_bytes_each, uint64_t max_count,
                         absl::string_view what);

  // "NAME: byte OFFSET: what", with the offset where the stream stands now.
  absl::Status Error(absl::string_view what);
  int64_t offset();

 private:
  absl::StatusOr<std::string> Word();  // text mode: skip spaces, read up to the next space
  // Skips white space and reads up to the next, at most kMaxKaldiTokenBytes; `what` names it.
  absl::StatusOr<std::string> BoundedWord(absl::string_view what);
  absl::Status ReadRaw(void* dst, size_t bytes, absl::string_view what);
  // An error unless an object (`what`, "a float matrix") of `values` values (`shape`, "R x C")
  // is within kMaxKaldiObjectValues and its `bytes` are within the bytes left.
  absl::Status CheckObjectBytes(uint64_t values, uint64_t bytes, absl::string_view what,
                                absl::string_view shape);
  // `count` values of T into `out`: checked against the bytes left, or read in bounded chunks.
  template <typename T>
  absl::Status ReadArray(uint64_t count, std::vector<T>* out, absl::string_view what,
                         absl::string_view shape);
  absl::StatusOr<std::vector<int32_t>> Int32VectorImpl();
  template <typename T>
  absl::StatusOr<std::vector<T>> RealVectorImpl();
  absl::StatusOr<Matrix> FloatMatrixImpl();
  // The values of a binary "FM" or "DM" matrix (its token read) as T, with its shape.
  template <typename T>
  absl::StatusOr<std::vector<T>> FullMatrixValues(const std::string& token, int32_t* rows,
                                                  int32_t* cols);
  template <typename T>
  absl::StatusOr<std::vector<T>> TextRealsInBrackets(bool matrix, int32_t* rows);
  absl::StatusOr<Matrix> CompressedMatrix(int format);

  static constexpr int64_t kEndNotAsked = -2;
  static constexpr int64_t kEndUnknown = -1;

  std::istream& is_;
  std::string name_;
  bool binary_;
  int64_t end_ = kEndNotAsked;  // the stream's end, once asked
};

// How a text-mode writer prints reals: kShortest, the shortest form that reads back to the same
// value (gmmscore's own files); kKaldi, as Kaldi's text streams print them (an ostream's default
// notation at precision 7, printf "%.7g"), for output that equals Kaldi's byte for byte.
enum class TextReals { kShortest, kKaldi };

class KaldiWriter {
 public:
  KaldiWriter(std::ostream& os, bool binary, TextReals reals = TextReals::kShortest)
      : os_(os), binary_(binary), reals_(reals) {}
  void BinaryMarker() {
    if (binary_) os_.write("\0B", 2);
  }
  void Token(absl::string_view token);
  void Int32(int32_t value);
  void Uint16(uint16_t value);
  void Float(float value);
  void Double(double value);
  void Int32Vector(const std::vector<int32_t>& v);
  void FloatVector(const float* data, size_t n);
  void DoubleVector(const double* data, size_t n);
  void FloatMatrix(const Matrix& m);
  // A Kaldi Matrix<double> ("DM" binary), row-major values.
  void DoubleMatrix(int32_t rows, int32_t cols, const double* data);
  void Newline() {
    if (!binary_) os_ << '\n';
  }
  bool binary() const { return binary_; }

 private:
  template <typename T>
  void TextReal(T value);
  template <typename T>
  void RealVector(const T* data, size_t n);
  template <typename T>
  void RealMatrix(const char* token, int32_t rows, int32_t cols, const T* data);
  std::ostream& os_;
  bool binary_;
  TextReals reals_;
};

}  // namespace gmmscore

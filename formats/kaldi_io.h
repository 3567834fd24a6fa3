// Kaldi's basic serialisation (src/base/io-funcs.cc, src/matrix/kaldi-vector.cc,
// kaldi-matrix.cc, compressed-matrix.cc): tokens, basic types, vectors and matrices, binary and
// text. The reader tracks the byte offset so every error names the file and the place.
#pragma once

#include <cstdint>
#include <istream>
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
  absl::StatusOr<float> Float();
  absl::StatusOr<std::vector<int32_t>> Int32Vector();
  absl::StatusOr<std::vector<float>> FloatVector();
  // Full, double ("DM") and compressed ("CM", "CM2", "CM3") matrices are all returned as float.
  absl::StatusOr<Matrix> FloatMatrix();
  // Text mode: the next whitespace-delimited word without consuming it.
  absl::StatusOr<std::string> PeekWord();

  // "NAME: byte OFFSET: what", with the offset where the stream stands now.
  absl::Status Error(absl::string_view what);
  int64_t offset();

 private:
  absl::StatusOr<std::string> Word();  // text mode: skip spaces, read up to the next space
  absl::Status ReadRaw(void* dst, size_t bytes, absl::string_view what);
  absl::StatusOr<std::vector<float>> TextFloatsInBrackets(bool matrix, int32_t* rows);
  absl::StatusOr<Matrix> CompressedMatrix(int format);

  std::istream& is_;
  std::string name_;
  bool binary_;
};

class KaldiWriter {
 public:
  KaldiWriter(std::ostream& os, bool binary) : os_(os), binary_(binary) {}
  void BinaryMarker() {
    if (binary_) os_.write("\0B", 2);
  }
  void Token(absl::string_view token);
  void Int32(int32_t value);
  void Float(float value);
  void Int32Vector(const std::vector<int32_t>& v);
  void FloatVector(const float* data, size_t n);
  void FloatMatrix(const Matrix& m);
  void Newline() {
    if (!binary_) os_ << '\n';
  }
  bool binary() const { return binary_; }

 private:
  std::ostream& os_;
  bool binary_;
};

}  // namespace gmmscore

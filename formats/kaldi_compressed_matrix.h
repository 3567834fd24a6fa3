// Kaldi's CompressedMatrix, the writing side: the bytes that Kaldi's CompressedMatrix::CopyFromMat
// followed by Write (src/matrix/compressed-matrix.cc) produce, e.g. in copy-feats --compress=true
// archives. formats/kaldi_io.h reads them (KaldiReader::FloatMatrix).
//
// The binary object is a token, its terminating space, and then, in native (little-endian) byte
// order, a 16-byte global header
//
//   float min_value, float range, int32 rows, int32 cols
//
// followed by the codes in one of three layouts, named by the token:
//
//   "CM"   per-column headers then one byte per value, column-major. Each column has four uint16
//          codes (its 0th, 25th, 75th and 100th percentiles, each a 16-bit code between
//          min_value and min_value + range); bytes 0..64 cover [p0, p25], 64..192 [p25, p75] and
//          192..255 [p75, p100], linearly.
//   "CM2"  one uint16 per value, row-major: min_value + code * range / 65535.
//   "CM3"  one uint8 per value, row-major: min_value + code * range / 255.
//
// The methods (Kaldi's enum CompressionMethod, copy-feats --compression-method):
//
//   1 automatic          "CM" for a matrix of more than 8 rows, else "CM2" (Kaldi's default)
//   2 speech feature     "CM",  min_value/range the matrix's minimum and max - min
//   3 two-byte auto      "CM2", min_value/range as for 2
//   4 two-byte integer   "CM2", [-32768, 32767]: min_value -32768, range 65535
//   5 one-byte auto      "CM3", min_value/range as for 2
//   6 one-byte unsigned  "CM3", [0, 255]
//   7 one-byte zero-one  "CM3", [0, 1]
//
// For the data-driven methods a constant matrix (max == min) gets range 1 + |min| so that the
// range is never zero. Values outside a fixed range are clamped to it.
//
// The arithmetic is Kaldi's to the bit: float where Kaldi computes in float, double where its
// double literals promote (the +0.499 and +0.5 before truncating to a code, the 1 + |min| above),
// the same percentile positions (0, n/4, 3*(n/4), n-1 of the sorted column for n >= 5 rows; the
// sorted values 0..3 for fewer, with the missing ones one code above the previous) and the same
// clamps that keep the four percentile codes strictly increasing. Where Kaldi divides by a zero
// interval (p25 == p0 or p100 == p75 as floats, which happens when the range is small against
// min_value) its float-to-int conversion is undefined in C++; the code here gives what x86-64
// Kaldi binaries compute (any NaN or out-of-range conversion yields INT_MIN, which the clamps turn
// into the interval's first code), so that such files match too.
//
// Where Kaldi refuses or writes garbage, an error instead: NaN anywhere; infinities with a
// data-driven method (Kaldi asserts); a range max - min that overflows float (Kaldi writes a
// matrix that decodes to NaN).
//
// An empty matrix (no rows or no columns) is Kaldi's special case: "CM " and a full 20-byte
// header of which the first word is Kaldi's (unwritten) format field, here 0, then min_value 0,
// range 0, rows 0, cols 0. Kaldi's reader, and KaldiReader, read only 16 bytes of it, leaving
// four zero bytes in the stream; that is what Kaldi does and is reproduced as it is.
//
// Text mode: Kaldi writes the decompressed values as an ordinary text matrix (" [ ... ]"); so
// does WriteCompressedMatrix with binary = false, through KaldiWriter::FloatMatrix.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "util/matrix.h"

namespace gmmscore {

// Kaldi's CompressionMethod values (src/matrix/compressed-matrix.h).
enum class CompressionMethod : int32_t {
  kAutomatic = 1,
  kSpeechFeature = 2,
  kTwoByteAuto = 3,
  kTwoByteSignedInteger = 4,
  kOneByteAuto = 5,
  kOneByteUnsignedInteger = 6,
  kOneByteZeroOne = 7,
};

// The method of copy-feats --compression-method=VALUE; INVALID_ARGUMENT outside 1..7.
absl::StatusOr<CompressionMethod> ParseCompressionMethod(int value);

// The binary object Kaldi writes for `m` compressed with `method`: token, space, header, codes
// (no "\0B" marker: that belongs to the table or file around it). INVALID_ARGUMENT for the inputs
// listed above, or a matrix whose data does not have rows * cols values.
absl::StatusOr<std::string> CompressMatrix(const Matrix& m, CompressionMethod method);

// Writes `m` as Kaldi's CompressedMatrix(m, method).Write(os, binary) does: the binary object
// above, or in text mode the decompressed values as a text matrix. DATA_LOSS when the stream
// fails.
absl::Status WriteCompressedMatrix(const Matrix& m, CompressionMethod method, std::ostream& os,
                                   bool binary = true);

}  // namespace gmmscore

// The s3 binary container of CMU Sphinx model files (means, variances, mixture_weights,
// transition_matrices): reading and writing 4-byte words in either byte order, the s3 header and
// checksum, and whole-file reads and writes. Internal to the Sphinx readers and writers.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gmmscore {

// The word at p, most significant byte first if `big_endian`, else least significant first.
uint32_t LoadWord(const char* p, bool big_endian);
// Stores w at p, little-endian.
void StoreWord(uint32_t w, char* p);

// "PATH: byte OFFSET: what".
absl::Status ByteError(const std::string& path, uint64_t offset, absl::string_view what);

absl::StatusOr<std::string> ReadWholeFile(const std::string& path);
absl::Status WriteWholeFile(const std::string& path, const std::string& bytes);

// An s3 binary file, read whole: a text header "s3\n" ... "endhdr\n", the byte-order magic, then
// 4-byte elements in the magic's byte order, and a checksum of them when the header has chksum0.
class S3Reader {
 public:
  static absl::StatusOr<S3Reader> Open(const std::string& path);

  const std::string& path() const { return path_; }
  uint64_t offset() const { return pos_; }
  absl::Status Error(uint64_t offset, absl::string_view what) const {
    return ByteError(path_, offset, what);
  }

  absl::StatusOr<int32_t> Int32(absl::string_view what);
  absl::StatusOr<std::vector<float>> Floats(uint64_t n, absl::string_view what);

  // Verifies the checksum, if the file has one, and that nothing follows.
  absl::Status Finish();

 private:
  S3Reader(std::string path, std::string bytes)
      : path_(std::move(path)), bytes_(std::move(bytes)) {}

  absl::StatusOr<absl::string_view> Line();
  absl::Status ReadHeader();
  absl::Status Need(uint64_t elements, absl::string_view what) const;
  uint32_t Element();

  std::string path_;
  std::string bytes_;
  uint64_t pos_ = 0;
  bool big_endian_ = false;
  bool has_checksum_ = false;
  uint32_t checksum_ = 0;
};

// A dimension that must be > 0; `what` names it in errors.
absl::StatusOr<int32_t> PositiveInt32(S3Reader& in, absl::string_view what);

// The element count that precedes the values, checked against the dimensions, then the values.
absl::StatusOr<std::vector<float>> ReadValues(S3Reader& in, uint64_t expected);

// "s3" header, magic, the dimensions, the element count, the values and the checksum.
std::string S3Bytes(const std::vector<int32_t>& dims, const std::vector<float>& values);

}  // namespace gmmscore

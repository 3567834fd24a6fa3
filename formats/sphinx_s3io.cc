// Reading and writing the s3 binary container of Sphinx model files.
#include "formats/sphinx_s3io.h"

#include <bit>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr uint32_t kByteOrderMagic = 0x11223344;

std::string Hex(uint32_t v) { return absl::StrCat("0x", absl::Hex(v, absl::kZeroPad8)); }

void AppendWord(uint32_t w, std::string& out) {
  char bytes[4];
  StoreWord(w, bytes);
  out.append(bytes, 4);
}

// sphinxbase's running checksum (bio.c) over 4-byte elements: rotate left by 20, then add.
uint32_t AccumulateChecksum(uint32_t sum, uint32_t word) { return std::rotl(sum, 20) + word; }

}  // namespace

uint32_t LoadWord(const char* p, bool big_endian) {
  uint32_t w = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t byte = static_cast<unsigned char>(p[big_endian ? i : 3 - i]);
    w = (w << 8) | byte;
  }
  return w;
}

void StoreWord(uint32_t w, char* p) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((w >> (8 * i)) & 0xffu);
}

absl::Status ByteError(const std::string& path, uint64_t offset, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": byte ", offset, ": ", what));
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream is(path, std::ios::binary);
  if (!is) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::string bytes{std::istreambuf_iterator<char>(is), std::istreambuf_iterator<char>()};
  if (is.bad()) return absl::DataLossError(absl::StrCat(path, ": read failed"));
  return bytes;
}

absl::Status WriteWholeFile(const std::string& path, const std::string& bytes) {
  std::ofstream os(path, std::ios::binary | std::ios::trunc);
  os.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  os.close();
  if (!os) return absl::DataLossError(absl::StrCat(path, ": write failed"));
  return absl::OkStatus();
}

absl::StatusOr<S3Reader> S3Reader::Open(const std::string& path) {
  GMM_ASSIGN_OR_RETURN(std::string bytes, ReadWholeFile(path));
  S3Reader in(path, std::move(bytes));
  GMM_RETURN_IF_ERROR(in.ReadHeader());
  return in;
}

absl::StatusOr<int32_t> S3Reader::Int32(absl::string_view what) {
  GMM_RETURN_IF_ERROR(Need(1, what));
  return std::bit_cast<int32_t>(Element());
}

absl::StatusOr<std::vector<float>> S3Reader::Floats(uint64_t n, absl::string_view what) {
  GMM_RETURN_IF_ERROR(Need(n, what));
  std::vector<float> values(n);
  for (float& v : values) v = std::bit_cast<float>(Element());
  return values;
}

absl::Status S3Reader::Finish() {
  if (has_checksum_) {
    GMM_RETURN_IF_ERROR(Need(1, "the checksum"));
    const uint64_t at = pos_;
    const uint32_t stored = LoadWord(&bytes_[pos_], big_endian_);
    pos_ += 4;
    if (stored != checksum_) {
      return Error(at, absl::StrCat("checksum ", Hex(stored), " does not match ", Hex(checksum_),
                                    " computed from the data"));
    }
  }
  if (pos_ != bytes_.size()) {
    return Error(pos_, absl::StrCat(bytes_.size() - pos_, " unexpected bytes after the data"));
  }
  return absl::OkStatus();
}

absl::StatusOr<absl::string_view> S3Reader::Line() {
  const size_t end = bytes_.find('\n', pos_);
  if (end == std::string::npos) return Error(pos_, "the header has no endhdr line");
  const absl::string_view line(bytes_.data() + pos_, end - pos_);
  pos_ = end + 1;
  return line;
}

absl::Status S3Reader::ReadHeader() {
  GMM_ASSIGN_OR_RETURN(absl::string_view first, Line());
  if (first != "s3") return Error(0, "not an s3 file (the first line is not \"s3\")");
  while (true) {
    const uint64_t at = pos_;
    GMM_ASSIGN_OR_RETURN(absl::string_view line, Line());
    const std::vector<absl::string_view> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (words.empty()) return Error(at, "empty header line");
    if (words[0] == "endhdr") break;
    if (words[0] == "chksum0") has_checksum_ = true;
  }
  if (bytes_.size() - pos_ < 4) return Error(pos_, "truncated before the byte-order magic");
  const uint32_t magic = LoadWord(&bytes_[pos_], false);
  big_endian_ = magic != kByteOrderMagic;
  if (big_endian_ && LoadWord(&bytes_[pos_], true) != kByteOrderMagic) {
    return Error(pos_, absl::StrCat("bad byte-order magic ", Hex(magic), ", expected ",
                                    Hex(kByteOrderMagic), " in either byte order"));
  }
  pos_ += 4;
  return absl::OkStatus();
}

absl::Status S3Reader::Need(uint64_t elements, absl::string_view what) const {
  const uint64_t left = bytes_.size() - pos_;
  if (elements > left / 4) {
    return Error(pos_, absl::StrCat("truncated: reading ", what, " takes ", elements * 4,
                                    " bytes, the file has ", left, " left"));
  }
  return absl::OkStatus();
}

uint32_t S3Reader::Element() {
  const uint32_t w = LoadWord(&bytes_[pos_], big_endian_);
  pos_ += 4;
  checksum_ = AccumulateChecksum(checksum_, w);
  return w;
}

absl::StatusOr<int32_t> PositiveInt32(S3Reader& in, absl::string_view what) {
  const uint64_t at = in.offset();
  GMM_ASSIGN_OR_RETURN(int32_t v, in.Int32(what));
  if (v < 1) return in.Error(at, absl::StrCat("bad ", what, " ", v));
  return v;
}

absl::StatusOr<std::vector<float>> ReadValues(S3Reader& in, uint64_t expected) {
  const uint64_t at = in.offset();
  GMM_ASSIGN_OR_RETURN(int32_t count, in.Int32("the element count"));
  if (count < 0 || uint64_t(count) != expected) {
    return in.Error(at, absl::StrCat("element count ", count, " does not match the dimensions (",
                                     expected, ")"));
  }
  return in.Floats(expected, "the values");
}

std::string S3Bytes(const std::vector<int32_t>& dims, const std::vector<float>& values) {
  std::string out = "s3\nversion 1.0\nchksum0 yes\n";
  const std::string endhdr = "endhdr\n";
  out.append((4 - (out.size() + endhdr.size()) % 4) % 4, ' ');  // align the data, as SphinxTrain
  out += endhdr;
  AppendWord(kByteOrderMagic, out);
  uint32_t checksum = 0;
  const auto put = [&](uint32_t w) {
    AppendWord(w, out);
    checksum = AccumulateChecksum(checksum, w);
  };
  for (int32_t d : dims) put(static_cast<uint32_t>(d));
  put(static_cast<uint32_t>(values.size()));
  for (float v : values) put(std::bit_cast<uint32_t>(v));
  AppendWord(checksum, out);
  return out;
}

}  // namespace gmmscore

#include "feat/wave_info.h"

#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "formats/table_specifier.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// Reads the header's fields in order, little-endian (RIFF) or big-endian (RIFX), counting bytes.
class HeaderReader {
 public:
  HeaderReader(std::istream& in, const std::string& name) : in_(in), name_(name) {}

  absl::StatusOr<std::string> Tag() {
    char tag[4];
    GMM_RETURN_IF_ERROR(Bytes(tag, 4));
    return std::string(tag, 4);
  }
  absl::Status Expect(const char* tag) {
    GMM_ASSIGN_OR_RETURN(const std::string got, Tag());
    if (got != tag) return Error(absl::StrCat("expected ", tag, ", got ", got));
    return absl::OkStatus();
  }
  absl::StatusOr<uint32_t> Uint32() { return Number(4); }
  absl::StatusOr<uint32_t> Uint16() { return Number(2); }
  // Skips n bytes of a chunk the reader has no use for.
  absl::Status Skip(uint32_t n) {
    in_.ignore(n);
    if (in_.gcount() != std::streamsize(n)) return Error("unexpected end of the header");
    consumed_ += n;
    return absl::OkStatus();
  }

  void set_big_endian(bool big) { big_endian_ = big; }
  int64_t consumed() const { return consumed_; }
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": WaveData: ", what));
  }

 private:
  absl::Status Bytes(char* out, int n) {
    if (!in_.read(out, n)) return Error("unexpected end of the header");
    consumed_ += n;
    return absl::OkStatus();
  }
  absl::StatusOr<uint32_t> Number(int bytes) {
    unsigned char b[4];
    GMM_RETURN_IF_ERROR(Bytes(reinterpret_cast<char*>(b), bytes));
    uint32_t v = 0;
    for (int i = 0; i < bytes; ++i) {
      const int shift = big_endian_ ? 8 * (bytes - 1 - i) : 8 * i;
      v |= uint32_t(b[i]) << shift;
    }
    return v;
  }

  std::istream& in_;
  const std::string& name_;
  bool big_endian_ = false;
  int64_t consumed_ = 0;
};

// The "fmt " chunk (its tag read): channels and rate, 16-bit PCM checked as Kaldi checks it.
absl::Status ReadFormat(HeaderReader& r, WaveInfo* info, uint32_t* block_align) {
  GMM_ASSIGN_OR_RETURN(const uint32_t size, r.Uint32());
  GMM_ASSIGN_OR_RETURN(const uint32_t format, r.Uint16());
  GMM_ASSIGN_OR_RETURN(const uint32_t channels, r.Uint16());
  GMM_ASSIGN_OR_RETURN(const uint32_t rate, r.Uint32());
  GMM_ASSIGN_OR_RETURN(const uint32_t byte_rate, r.Uint32());
  GMM_ASSIGN_OR_RETURN(*block_align, r.Uint16());
  GMM_ASSIGN_OR_RETURN(const uint32_t bits, r.Uint16());
  uint32_t read = 16;
  if (format == 1) {
    if (size < 16) return r.Error("expect PCM format data to have fmt chunk of at least size 16.");
  } else if (format == 0xFFFE) {  // WAVE_FORMAT_EXTENSIBLE
    GMM_ASSIGN_OR_RETURN(const uint32_t extra, r.Uint16());
    if (size < 40 || extra < 22) return r.Error("malformed WAVE_FORMAT_EXTENSIBLE format data.");
    GMM_RETURN_IF_ERROR(r.Skip(6));  // valid bits, channel mask
    uint32_t guid[4];
    for (uint32_t& g : guid) {
      GMM_ASSIGN_OR_RETURN(g, r.Uint32());
    }
    // KSDATAFORMAT_SUBTYPE_PCM, 00000001-0000-0010-8000-00aa00389b71, read as four numbers.
    if (guid[0] != 0x00000001 || guid[1] != 0x00100000 || guid[2] != 0xAA000080 ||
        guid[3] != 0x719B3800) {
      return r.Error("unsupported WAVE_FORMAT_EXTENSIBLE format.");
    }
    read = 40;
  } else {
    return r.Error(absl::StrCat("can read only PCM data, format id in file is: ", format));
  }
  if (size > read) GMM_RETURN_IF_ERROR(r.Skip(size - read));
  if (channels == 0) return r.Error("no channels present");
  if (bits != 16) return r.Error(absl::StrCat("unsupported bits_per_sample = ", bits));
  if (byte_rate != rate * bits / 8 * channels) {
    return r.Error(absl::StrCat("Unexpected byte rate ", byte_rate, " vs. ", rate, " * ", bits / 8,
                                " * ", channels));
  }
  if (*block_align != channels * bits / 8) {
    return r.Error(
        absl::StrCat("Unexpected block_align: ", *block_align, " vs. ", channels, " * ", bits / 8));
  }
  info->channels = static_cast<int32_t>(channels);
  info->sample_rate = static_cast<float>(rate);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<WaveInfo> ReadWaveInfo(std::istream& in, const std::string& name) {
  HeaderReader r(in, name);
  GMM_ASSIGN_OR_RETURN(const std::string riff, r.Tag());
  if (riff != "RIFF" && riff != "RIFX") return r.Error("expected RIFF or RIFX, got " + riff);
  r.set_big_endian(riff == "RIFX");
  GMM_ASSIGN_OR_RETURN(const uint32_t riff_size, r.Uint32());
  GMM_RETURN_IF_ERROR(r.Expect("WAVE"));
  GMM_ASSIGN_OR_RETURN(std::string tag, r.Tag());
  while (tag != "fmt ") {  // fillers (Apple's JUNK) before the format
    GMM_ASSIGN_OR_RETURN(const uint32_t size, r.Uint32());
    GMM_RETURN_IF_ERROR(r.Skip(size));
    GMM_ASSIGN_OR_RETURN(tag, r.Tag());
  }
  WaveInfo info;
  uint32_t block_align = 0;
  GMM_RETURN_IF_ERROR(ReadFormat(r, &info, &block_align));
  GMM_ASSIGN_OR_RETURN(tag, r.Tag());
  while (tag != "data") {  // "fact", "LIST", ...
    GMM_ASSIGN_OR_RETURN(const uint32_t size, r.Uint32());
    GMM_RETURN_IF_ERROR(r.Skip(size));
    GMM_ASSIGN_OR_RETURN(tag, r.Tag());
  }
  GMM_ASSIGN_OR_RETURN(const uint32_t data_size, r.Uint32());
  const bool streamed = riff_size == 0 || riff_size == 0xFFFFFFFFu || data_size == 0 ||
                        data_size == 0xFFFFFFFFu || data_size == 0x7FFFF000u;
  if (streamed) return info;
  info.samples = data_size / block_align;
  // The rest of the object, to the end of the RIFF chunk.
  const int64_t rest = int64_t{riff_size} + 8 - r.consumed();
  if (rest > 0) in.ignore(rest);
  return info;
}

absl::StatusOr<std::unique_ptr<WaveInfoTableReader>> WaveInfoTableReader::Open(
    const std::string& rspecifier) {
  GMM_ASSIGN_OR_RETURN(TableSpecifier spec, ParseRspecifier(rspecifier));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryReader> entries, TableEntryReader::Open(spec));
  return std::unique_ptr<WaveInfoTableReader>(new WaveInfoTableReader(std::move(entries)));
}

absl::StatusOr<bool> WaveInfoTableReader::Next(std::string* key, WaveInfo* info) {
  GMM_ASSIGN_OR_RETURN(const bool more, entries_->Next(key));
  if (!more) return false;
  GMM_ASSIGN_OR_RETURN(*info, ReadWaveInfo(entries_->object(), entries_->object_name()));
  return true;
}

}  // namespace gmmscore

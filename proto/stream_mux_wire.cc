#include "proto/stream_mux_wire.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace gmmscore::wire {
namespace {

constexpr int kVarint = 0;
constexpr int kFixed64 = 1;
constexpr int kLengthDelimited = 2;
constexpr int kFixed32 = 5;

void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(char(uint8_t(value) | 0x80));
    value >>= 7;
  }
  out->push_back(char(value));
}

void AppendKey(int field, int wire_type, std::string* out) {
  AppendVarint(uint64_t(field) << 3 | uint64_t(wire_type), out);
}

// Reads protobuf's wire format from a message held as slices, without joining them; a field's
// bytes come out as slices of the message (Slice::sub: a reference).
class SliceReader {
 public:
  explicit SliceReader(const std::vector<grpc::Slice>* slices, size_t limit)
      : slices_(slices), left_(limit) {}

  size_t consumed() const { return consumed_; }
  bool at_end() const { return left_ == 0; }

  bool ReadVarint(uint64_t* value) {
    *value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t byte = 0;
      if (!ReadByte(&byte)) return false;
      *value |= uint64_t(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;  // more than 10 bytes
  }

  // The next n bytes as slices of the message (appended to out, when given).
  bool Take(size_t n, std::vector<grpc::Slice>* out) {
    if (n > left_) return false;
    left_ -= n;
    consumed_ += n;
    while (n > 0) {
      const grpc::Slice& slice = (*slices_)[index_];
      const size_t here = std::min(n, slice.size() - offset_);
      if (out != nullptr && here > 0) out->push_back(slice.sub(offset_, offset_ + here));
      Advance(here);
      n -= here;
    }
    return true;
  }

  // The next n bytes, copied (short fields).
  bool ReadString(size_t n, std::string* out) {
    std::vector<grpc::Slice> parts;
    if (!Take(n, &parts)) return false;
    out->clear();
    for (const grpc::Slice& part : parts)
      out->append(reinterpret_cast<const char*>(part.begin()), part.size());
    return true;
  }

  // A field's key: its number and wire type; false at the end or where it does not parse.
  bool ReadKey(int* field, int* wire_type) {
    uint64_t key = 0;
    if (!ReadVarint(&key) || key >> 3 == 0 || key >> 3 > 0x1fffffff) return false;
    *field = int(key >> 3);
    *wire_type = int(key & 7);
    return true;
  }

  bool ReadLength(size_t* n) {
    uint64_t length = 0;
    if (!ReadVarint(&length) || length > left_) return false;
    *n = size_t(length);
    return true;
  }

  // Skips a field of a type protobuf may add (groups, deprecated, are refused).
  bool SkipField(int wire_type) {
    uint64_t unused = 0;
    size_t n = 0;
    switch (wire_type) {
      case kVarint:
        return ReadVarint(&unused);
      case kFixed64:
        return Take(8, nullptr);
      case kLengthDelimited:
        return ReadLength(&n) && Take(n, nullptr);
      case kFixed32:
        return Take(4, nullptr);
      default:
        return false;
    }
  }

 private:
  bool ReadByte(uint8_t* byte) {
    if (left_ == 0) return false;
    while (offset_ == (*slices_)[index_].size()) Advance(0);
    *byte = (*slices_)[index_].begin()[offset_];
    --left_;
    ++consumed_;
    Advance(1);
    return true;
  }
  void Advance(size_t n) {
    offset_ += n;
    while (index_ < slices_->size() && offset_ == (*slices_)[index_].size() &&
           index_ + 1 < slices_->size()) {
      ++index_;
      offset_ = 0;
    }
  }

  const std::vector<grpc::Slice>* slices_;
  size_t index_ = 0;
  size_t offset_ = 0;
  size_t left_;
  size_t consumed_ = 0;
};

std::vector<grpc::Slice> SlicesOf(const grpc::ByteBuffer& message) {
  std::vector<grpc::Slice> slices;
  // Dump fails only for a buffer that holds nothing (an empty message), which has no slices.
  if (!message.Dump(&slices).ok()) slices.clear();
  return slices;
}

size_t TotalSize(const std::vector<grpc::Slice>& slices) {
  size_t n = 0;
  for (const grpc::Slice& slice : slices) n += slice.size();
  return n;
}

// Whether a serialized ScoreRequest holds a StreamConfig (field 1).
bool HoldsStreamConfig(const std::vector<grpc::Slice>& request) {
  SliceReader in(&request, TotalSize(request));
  int field = 0, wire_type = 0;
  while (!in.at_end()) {
    if (!in.ReadKey(&field, &wire_type)) return false;
    if (field == 1 && wire_type == kLengthDelimited) return true;
    if (!in.SkipField(wire_type)) return false;
  }
  return false;
}

// Calls read_entry(reader, entry bytes) for each field-1 entry of a message of `repeated Entry
// entries = 1` (skipping other fields, as protobuf does); false where the bytes do not parse,
// with *bad_at the offset of the field that did not.
template <typename ReadEntry>
bool ReadEntries(const std::vector<grpc::Slice>& slices, ReadEntry read_entry, size_t* bad_at) {
  SliceReader in(&slices, TotalSize(slices));
  int field = 0, wire_type = 0;
  while (!in.at_end()) {
    *bad_at = in.consumed();
    if (!in.ReadKey(&field, &wire_type)) return false;
    if (field == 1 && wire_type == kLengthDelimited) {
      size_t n = 0;
      std::vector<grpc::Slice> entry;
      if (!in.ReadLength(&n) || !in.Take(n, &entry) || !read_entry(entry, n)) return false;
    } else if (!in.SkipField(wire_type)) {
      return false;
    }
  }
  return true;
}

bool ReadRequestEntry(const std::vector<grpc::Slice>& entry, size_t size, StreamRequestView* out) {
  SliceReader in(&entry, size);
  int field = 0, wire_type = 0;
  uint64_t value = 0;
  while (!in.at_end()) {
    if (!in.ReadKey(&field, &wire_type)) return false;
    if (field == 1 && wire_type == kVarint) {
      if (!in.ReadVarint(&out->tag)) return false;
    } else if (field == 2 && wire_type == kLengthDelimited) {
      size_t n = 0;
      std::vector<grpc::Slice> request;
      if (!in.ReadLength(&n) || !in.Take(n, &request)) return false;
      out->has_request = true;
      out->holds_config = HoldsStreamConfig(request);
      out->request = grpc::ByteBuffer(request.data(), request.size());
    } else if ((field == 3 || field == 4) && wire_type == kVarint) {
      if (!in.ReadVarint(&value)) return false;
      (field == 3 ? out->writes_done : out->cancel) = value != 0;
    } else if (!in.SkipField(wire_type)) {
      return false;
    }
  }
  return true;
}

bool ReadStatus(const std::vector<grpc::Slice>& status, size_t size, StreamReplyView* out) {
  SliceReader in(&status, size);
  int field = 0, wire_type = 0;
  uint64_t value = 0;
  while (!in.at_end()) {
    if (!in.ReadKey(&field, &wire_type)) return false;
    if (field == 1 && wire_type == kVarint) {
      if (!in.ReadVarint(&value)) return false;
      out->code = int32_t(uint32_t(value));  // int32: negative values are 10 bytes
    } else if (field == 2 && wire_type == kLengthDelimited) {
      size_t n = 0;
      if (!in.ReadLength(&n) || !in.ReadString(n, &out->message)) return false;
    } else if (!in.SkipField(wire_type)) {
      return false;
    }
  }
  return true;
}

bool ReadReplyEntry(const std::vector<grpc::Slice>& entry, size_t size, StreamReplyView* out) {
  SliceReader in(&entry, size);
  int field = 0, wire_type = 0;
  while (!in.at_end()) {
    if (!in.ReadKey(&field, &wire_type)) return false;
    size_t n = 0;
    std::vector<grpc::Slice> bytes;
    if (field == 1 && wire_type == kVarint) {
      if (!in.ReadVarint(&out->tag)) return false;
    } else if ((field == 2 || field == 3) && wire_type == kLengthDelimited) {
      if (!in.ReadLength(&n) || !in.Take(n, &bytes)) return false;
      // A oneof: the last of its fields wins.
      out->has_response = field == 2;
      out->has_status = field == 3;
      if (field == 2) {
        out->response = grpc::ByteBuffer(bytes.data(), bytes.size());
      } else if (!ReadStatus(bytes, n, out)) {
        return false;
      }
    } else if (!in.SkipField(wire_type)) {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<StreamRequestView>> ReadStreamsRequest(const grpc::ByteBuffer& message) {
  const std::vector<grpc::Slice> slices = SlicesOf(message);
  std::vector<StreamRequestView> entries;
  size_t bad_at = 0;
  const bool ok = ReadEntries(
      slices,
      [&](const std::vector<grpc::Slice>& entry, size_t size) {
        return ReadRequestEntry(entry, size, &entries.emplace_back());
      },
      &bad_at);
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat("a ScoreStreamsRequest of ", TotalSize(slices),
                                                   " bytes does not parse (entry ", entries.size(),
                                                   ", from byte ", bad_at, ")"));
  }
  return entries;
}

absl::StatusOr<std::vector<StreamReplyView>> ReadStreamsResponse(const grpc::ByteBuffer& message) {
  const std::vector<grpc::Slice> slices = SlicesOf(message);
  std::vector<StreamReplyView> entries;
  size_t bad_at = 0;
  const bool ok = ReadEntries(
      slices,
      [&](const std::vector<grpc::Slice>& entry, size_t size) {
        return ReadReplyEntry(entry, size, &entries.emplace_back());
      },
      &bad_at);
  if (!ok) {
    return absl::DataLossError(absl::StrCat("a ScoreStreamsResponse of ", TotalSize(slices),
                                            " bytes does not parse (entry ", entries.size(),
                                            ", from byte ", bad_at, ")"));
  }
  return entries;
}

std::string StreamRequestHeader(uint64_t tag, bool has_request, size_t request_bytes,
                                bool writes_done, bool cancel) {
  std::string fields;
  AppendKey(1, kVarint, &fields);
  AppendVarint(tag, &fields);
  if (writes_done) {
    AppendKey(3, kVarint, &fields);
    AppendVarint(1, &fields);
  }
  if (cancel) {
    AppendKey(4, kVarint, &fields);
    AppendVarint(1, &fields);
  }
  if (has_request) {
    AppendKey(2, kLengthDelimited, &fields);
    AppendVarint(request_bytes, &fields);
  }
  const size_t entry_bytes = fields.size() + (has_request ? request_bytes : 0);
  std::string header;
  AppendKey(1, kLengthDelimited, &header);
  AppendVarint(entry_bytes, &header);
  return header + fields;
}

std::string StreamReplyHeader(uint64_t tag, size_t response_bytes) {
  std::string fields;
  AppendKey(1, kVarint, &fields);
  AppendVarint(tag, &fields);
  AppendKey(2, kLengthDelimited, &fields);
  AppendVarint(response_bytes, &fields);
  std::string header;
  AppendKey(1, kLengthDelimited, &header);
  AppendVarint(fields.size() + response_bytes, &header);
  return header + fields;
}

std::string StreamStatusReply(uint64_t tag, int32_t code, std::string_view message) {
  std::string status;
  if (code != 0) {
    AppendKey(1, kVarint, &status);
    AppendVarint(uint64_t(int64_t(code)), &status);  // int32: negative values as 10 bytes
  }
  if (!message.empty()) {
    AppendKey(2, kLengthDelimited, &status);
    AppendVarint(message.size(), &status);
    status.append(message);
  }
  std::string fields;
  AppendKey(1, kVarint, &fields);
  AppendVarint(tag, &fields);
  AppendKey(3, kLengthDelimited, &fields);
  AppendVarint(status.size(), &fields);
  fields += status;
  std::string entry;
  AppendKey(1, kLengthDelimited, &entry);
  AppendVarint(fields.size(), &entry);
  return entry + fields;
}

}  // namespace gmmscore::wire

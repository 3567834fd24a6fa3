#include "proto/stream_mux_wire.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include "absl/strings/str_cat.h"

namespace gmmscore::wire {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

constexpr int kLengthDelimited = WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
constexpr int kVarint = WireFormatLite::WIRETYPE_VARINT;

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

// A field's wire type and number from its key.
int WireType(uint32_t key) { return int(key & 7); }
int FieldNumber(uint32_t key) { return int(key >> 3); }

// Reads a length-delimited field's bytes (after its key) as a view into `message`.
bool ReadBytes(CodedInputStream* in, std::string_view message, std::string_view* out) {
  uint32_t length = 0;
  if (!in->ReadVarint32(&length)) return false;
  const size_t at = size_t(in->CurrentPosition());
  if (length > message.size() - at) return false;
  *out = message.substr(at, length);
  return in->Skip(int(length));
}

// Calls read_entry(bytes) for each field 1 entry of a message of `repeated Entry = 1` (skipping
// other fields, as protobuf does); false where the bytes do not parse.
template <typename ReadEntry>
bool ReadEntries(std::string_view message, ReadEntry read_entry, size_t* bad_at) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(message.data()), int(message.size()));
  while (true) {
    *bad_at = size_t(in.CurrentPosition());
    const uint32_t key = in.ReadTag();
    if (key == 0) return size_t(in.CurrentPosition()) == message.size();
    if (FieldNumber(key) == 1 && WireType(key) == kLengthDelimited) {
      std::string_view entry;
      if (!ReadBytes(&in, message, &entry) || !read_entry(entry)) return false;
    } else if (!WireFormatLite::SkipField(&in, key)) {
      return false;
    }
  }
}

bool ReadRequestEntry(std::string_view entry, StreamRequestView* out) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(entry.data()), int(entry.size()));
  for (uint32_t key = in.ReadTag(); key != 0; key = in.ReadTag()) {
    const int field = FieldNumber(key);
    uint64_t value = 0;
    if (field == 1 && WireType(key) == kVarint) {
      if (!in.ReadVarint64(&out->tag)) return false;
    } else if (field == 2 && WireType(key) == kLengthDelimited) {
      out->has_request = true;
      if (!ReadBytes(&in, entry, &out->request)) return false;
    } else if ((field == 3 || field == 4) && WireType(key) == kVarint) {
      if (!in.ReadVarint64(&value)) return false;
      (field == 3 ? out->writes_done : out->cancel) = value != 0;
    } else if (!WireFormatLite::SkipField(&in, key)) {
      return false;
    }
  }
  return size_t(in.CurrentPosition()) == entry.size();
}

bool ReadStatus(std::string_view status, StreamReplyView* out) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(status.data()), int(status.size()));
  for (uint32_t key = in.ReadTag(); key != 0; key = in.ReadTag()) {
    uint64_t value = 0;
    if (FieldNumber(key) == 1 && WireType(key) == kVarint) {
      if (!in.ReadVarint64(&value)) return false;
      out->code = int32_t(value);
    } else if (FieldNumber(key) == 2 && WireType(key) == kLengthDelimited) {
      if (!ReadBytes(&in, status, &out->message)) return false;
    } else if (!WireFormatLite::SkipField(&in, key)) {
      return false;
    }
  }
  return size_t(in.CurrentPosition()) == status.size();
}

bool ReadReplyEntry(std::string_view entry, StreamReplyView* out) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(entry.data()), int(entry.size()));
  for (uint32_t key = in.ReadTag(); key != 0; key = in.ReadTag()) {
    const int field = FieldNumber(key);
    std::string_view bytes;
    if (field == 1 && WireType(key) == kVarint) {
      if (!in.ReadVarint64(&out->tag)) return false;
    } else if (field == 2 && WireType(key) == kLengthDelimited) {
      // A oneof: the last of its fields wins.
      out->has_response = true;
      out->has_status = false;
      if (!ReadBytes(&in, entry, &out->response)) return false;
    } else if (field == 3 && WireType(key) == kLengthDelimited) {
      out->has_status = true;
      out->has_response = false;
      if (!ReadBytes(&in, entry, &bytes) || !ReadStatus(bytes, out)) return false;
    } else if (!WireFormatLite::SkipField(&in, key)) {
      return false;
    }
  }
  return size_t(in.CurrentPosition()) == entry.size();
}

}  // namespace

absl::StatusOr<std::vector<StreamRequestView>> ReadStreamsRequest(std::string_view message) {
  std::vector<StreamRequestView> entries;
  size_t bad_at = 0;
  const bool ok = ReadEntries(
      message,
      [&](std::string_view entry) {
        entries.emplace_back();
        return ReadRequestEntry(entry, &entries.back());
      },
      &bad_at);
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat("a ScoreStreamsRequest of ", message.size(),
                                                   " bytes does not parse (entry ", entries.size(),
                                                   ", from byte ", bad_at, ")"));
  }
  return entries;
}

bool HoldsStreamConfig(std::string_view request) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(request.data()), int(request.size()));
  for (uint32_t key = in.ReadTag(); key != 0; key = in.ReadTag()) {
    if (FieldNumber(key) == 1 && WireType(key) == kLengthDelimited) return true;
    if (!WireFormatLite::SkipField(&in, key)) return false;
  }
  return false;
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

absl::StatusOr<std::vector<StreamReplyView>> ReadStreamsResponse(std::string_view message) {
  std::vector<StreamReplyView> entries;
  size_t bad_at = 0;
  const bool ok = ReadEntries(
      message,
      [&](std::string_view entry) {
        entries.emplace_back();
        return ReadReplyEntry(entry, &entries.back());
      },
      &bad_at);
  if (!ok) {
    return absl::DataLossError(absl::StrCat("a ScoreStreamsResponse of ", message.size(),
                                            " bytes does not parse (entry ", entries.size(),
                                            ", from byte ", bad_at, ")"));
  }
  return entries;
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

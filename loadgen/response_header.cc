#include "loadgen/response_header.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <grpcpp/support/proto_buffer_reader.h>

#include "absl/strings/str_cat.h"

namespace gmmscore {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

// The fields of v1::ScoreResponse this reads (scorer.proto).
enum Field : uint32_t {
  kFirstFrame = 2,
  kNumFrames = 3,
  kNumStates = 4,
  kEncoding = 5,
  kScores = 6,
  kSparseStates = 7,
  kSparseCounts = 8,
  kBestState = 9,
  kBestScore = 10,
};

// Counts the values of a repeated field, packed or not: varints (counting their total into
// *sum when given) or fixed 32-bit values.
bool CountRepeated(CodedInputStream* in, uint32_t tag, bool fixed32, int64_t* count,
                   uint64_t* sum) {
  const auto one = [&]() {
    if (fixed32) {
      uint32_t v = 0;
      return in->ReadLittleEndian32(&v);
    }
    uint64_t v = 0;
    if (!in->ReadVarint64(&v)) return false;
    if (sum != nullptr) *sum += v;
    return true;
  };
  if (WireFormatLite::GetTagWireType(tag) != WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
    ++*count;
    return one();
  }
  uint32_t length = 0;
  if (!in->ReadVarint32(&length)) return false;
  const CodedInputStream::Limit limit = in->PushLimit(int(length));
  while (in->BytesUntilLimit() > 0) {
    if (!one()) return false;
    ++*count;
  }
  in->PopLimit(limit);
  return true;
}

}  // namespace

absl::StatusOr<ResponseHeader> ReadResponseHeader(grpc::ByteBuffer* buffer) {
  ResponseHeader h;
  int64_t scores_bytes = 0, states_bytes = 0, counts = 0, best_states = 0, best_scores = 0;
  uint64_t counted = 0;
  bool parsed = true;
  {
    grpc::ProtoBufferReader reader(buffer);
    CodedInputStream in(&reader);
    for (uint32_t tag = in.ReadTag(); tag != 0 && parsed; tag = in.ReadTag()) {
      uint64_t v = 0;
      uint32_t length = 0;
      switch (WireFormatLite::GetTagFieldNumber(tag)) {
        case kFirstFrame:
        case kNumFrames:
        case kNumStates:
        case kEncoding:
          parsed = in.ReadVarint64(&v);
          if (WireFormatLite::GetTagFieldNumber(tag) == kFirstFrame) h.first_frame = int64_t(v);
          if (WireFormatLite::GetTagFieldNumber(tag) == kNumFrames) h.num_frames = int32_t(v);
          if (WireFormatLite::GetTagFieldNumber(tag) == kNumStates) h.num_states = int32_t(v);
          if (WireFormatLite::GetTagFieldNumber(tag) == kEncoding)
            h.encoding = v1::StreamConfig::Encoding(v);
          break;
        case kScores:
        case kSparseStates:
          // Skipped, not copied: only their length is checked.
          parsed = in.ReadVarint32(&length) && in.Skip(int(length));
          (WireFormatLite::GetTagFieldNumber(tag) == kScores ? scores_bytes : states_bytes) +=
              length;
          break;
        case kSparseCounts:
          parsed = CountRepeated(&in, tag, false, &counts, &counted);
          break;
        case kBestState:
          parsed = CountRepeated(&in, tag, false, &best_states, nullptr);
          break;
        case kBestScore:
          parsed = CountRepeated(&in, tag, true, &best_scores, nullptr);
          break;
        default:
          parsed = WireFormatLite::SkipField(&in, tag);
      }
    }
    parsed = parsed && in.ConsumedEntireMessage();
  }
  const auto bad = [&](const std::string& what) {
    return absl::DataLossError(
        absl::StrCat("response for frames ", h.first_frame, "+", h.num_frames, ": ", what));
  };
  if (!parsed) return bad("not a ScoreResponse");
  if (h.num_frames < 0 || h.num_states < 0) return bad("negative sizes");
  if (best_states != h.num_frames || best_scores != h.num_frames) return bad("best-state lists");
  const int64_t values = int64_t(h.num_frames) * h.num_states;
  switch (h.encoding) {
    case v1::StreamConfig::FLOAT32:
      if (scores_bytes != values * 4) return bad("score bytes");
      break;
    case v1::StreamConfig::FLOAT16:
    case v1::StreamConfig::RELATIVE16:
      if (scores_bytes != values * 2) return bad("score bytes");
      break;
    case v1::StreamConfig::BEAM_SPARSE:
      if (counts != h.num_frames) return bad("sparse counts");
      if (uint64_t(scores_bytes) != counted * 4 || uint64_t(states_bytes) != counted * 4)
        return bad("sparse bytes");
      break;
    default:
      return bad(absl::StrCat("unknown encoding ", int(h.encoding)));
  }
  return h;
}

}  // namespace gmmscore

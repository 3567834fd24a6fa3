// The entries of a ScoreStreams call's messages (scorer.proto: ScoreStreamsRequest.requests,
// ScoreStreamsResponse.replies) read and written without parsing or copying the ScoreRequest or
// ScoreResponse each carries. A message is read as gRPC received it, a list of slices, and each
// entry's payload comes out as slices of those (references, not copies): a stream's request goes
// to its session as the bytes a Score call would have read, and a stream's response (100 KB of
// scores, sent without a copy by server/rpc/response_buffer.h) reaches the client's stream the
// same way. Written entries are a few bytes of header before the payload's slices. The daemon and
// the load generator use these; a client with the generated classes reads and writes the same
// bytes.
#pragma once

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gmmscore::wire {

struct StreamRequestView {
  uint64_t tag = 0;
  bool has_request = false;
  grpc::ByteBuffer request;   // a serialized ScoreRequest: slices of the message read
  bool holds_config = false;  // the request holds a StreamConfig (it starts a stream)
  bool writes_done = false;
  bool cancel = false;
};

// The entries of a serialized ScoreStreamsRequest, in order; InvalidArgument where it does not
// parse (naming the entry and byte offset).
absl::StatusOr<std::vector<StreamRequestView>> ReadStreamsRequest(const grpc::ByteBuffer& message);

// The bytes of one ScoreStreamsRequest entry up to its request, which follows them
// (request_bytes long; none when has_request is false).
std::string StreamRequestHeader(uint64_t tag, bool has_request, size_t request_bytes,
                                bool writes_done, bool cancel);

struct StreamReplyView {
  uint64_t tag = 0;
  bool has_response = false;
  grpc::ByteBuffer response;  // a serialized ScoreResponse: slices of the message read
  bool has_status = false;
  int32_t code = 0;
  std::string message;
};

// The entries of a serialized ScoreStreamsResponse, in order; DataLoss where it does not parse.
absl::StatusOr<std::vector<StreamReplyView>> ReadStreamsResponse(const grpc::ByteBuffer& message);

// The bytes of one ScoreStreamsResponse entry up to its response, which follows them.
std::string StreamReplyHeader(uint64_t tag, size_t response_bytes);
// One whole ScoreStreamsResponse entry: a stream's status.
std::string StreamStatusReply(uint64_t tag, int32_t code, std::string_view message);

}  // namespace gmmscore::wire

// The entries of a ScoreStreams call's messages (scorer.proto: ScoreStreamsRequest.requests,
// ScoreStreamsResponse.replies) read and written without parsing or copying the ScoreRequest or
// ScoreResponse each carries: a stream's request goes to its session as the bytes a Score call
// would have read, and a stream's response, 100 KB of scores that the server does not copy
// (server/rpc/response_buffer.h), follows a few bytes of entry header. The daemon and the load
// generator use these; a client with the generated classes reads and writes the same bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gmmscore::wire {

struct StreamRequestView {
  uint64_t tag = 0;
  bool has_request = false;
  std::string_view request;  // a serialized ScoreRequest, into the message read
  bool writes_done = false;
  bool cancel = false;
};

// The entries of a serialized ScoreStreamsRequest, in order; InvalidArgument where it does not
// parse (naming the byte offset).
absl::StatusOr<std::vector<StreamRequestView>> ReadStreamsRequest(std::string_view message);

// Whether a serialized ScoreRequest holds a StreamConfig (the message that starts a stream).
bool HoldsStreamConfig(std::string_view request);

// The bytes of one ScoreStreamsRequest entry up to its request, which follows them
// (request_bytes long; none when has_request is false).
std::string StreamRequestHeader(uint64_t tag, bool has_request, size_t request_bytes,
                                bool writes_done, bool cancel);

struct StreamReplyView {
  uint64_t tag = 0;
  bool has_response = false;
  std::string_view response;  // a serialized ScoreResponse, into the message read
  bool has_status = false;
  int32_t code = 0;
  std::string_view message;
};

// The entries of a serialized ScoreStreamsResponse, in order; DataLoss where it does not parse.
absl::StatusOr<std::vector<StreamReplyView>> ReadStreamsResponse(std::string_view message);

// The bytes of one ScoreStreamsResponse entry up to its response, which follows them.
std::string StreamReplyHeader(uint64_t tag, size_t response_bytes);
// One whole ScoreStreamsResponse entry: a stream's status.
std::string StreamStatusReply(uint64_t tag, int32_t code, std::string_view message);

}  // namespace gmmscore::wire

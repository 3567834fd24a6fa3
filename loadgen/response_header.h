// A Score response's header read straight from the bytes gRPC received, without copying or
// converting its scores: what the load generator checks of each window by default, so that its
// CPU goes to driving streams rather than to decoding 100 KB windows (bench-stream
// --decode-scores decodes them as a client would).
#pragma once

#include <grpcpp/support/byte_buffer.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "gmmscore/v1/scorer.pb.h"

namespace gmmscore {

struct ResponseHeader {
  int64_t first_frame = 0;
  int32_t num_frames = 0;
  int32_t num_states = 0;
  v1::StreamConfig::Encoding encoding = v1::StreamConfig::FLOAT32;
};

// Reads a serialized v1::ScoreResponse's header and checks the sizes DecodeResponse
// (client/scorer_client.h) would: one best state and best score per frame; dense encodings
// num_frames x num_states values of their width; BEAM_SPARSE a count per frame and 4 bytes of
// score and of state per counted entry. DataLoss, naming the frames, where they do not add up or
// the message does not parse.
absl::StatusOr<ResponseHeader> ReadResponseHeader(grpc::ByteBuffer* buffer);

}  // namespace gmmscore

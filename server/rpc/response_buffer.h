// A ScoreResponse as the bytes gRPC sends, without copying its scores. A window's scores are
// most of its response (10 frames x 5000 states in RELATIVE16: 100 KB); serializing the message
// the usual way copies them into gRPC's buffer. Here the other fields are serialized into one
// small slice and the scores are a slice of their own that references them (the response's
// string moved out, or bytes held elsewhere: rows in a buffer the device lent), released once
// gRPC has sent them. Protobuf parsers take a message's fields in any order, so a client reads
// the scores field after the others as the same message.
#pragma once

#include <grpcpp/support/byte_buffer.h>

#include "gmmscore/v1/scorer.pb.h"
#include "util/shared_bytes.h"

namespace gmmscore::server {

// The serialized message: response's scores taken (left empty), or where `scores` is not empty,
// response (whose scores must be empty) with `scores` as its scores.
grpc::ByteBuffer SerializeResponse(v1::ScoreResponse* response, SharedBytes scores = {});

}  // namespace gmmscore::server

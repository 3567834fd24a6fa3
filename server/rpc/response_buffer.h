// A ScoreResponse as the bytes gRPC sends, without copying its scores. A window's scores are
// most of its response (10 frames x 5000 states in RELATIVE16: 100 KB); serializing the message
// the usual way copies them into gRPC's buffer. Here the other fields are serialized into one
// small slice and the scores string is moved into a slice of its own, which gRPC frees once it
// has sent it. Protobuf parsers take a message's fields in any order, so a client reads the
// scores field after the others as the same message.
#pragma once

#include <grpcpp/support/byte_buffer.h>

#include "gmmscore/v1/scorer.pb.h"

namespace gmmscore::server {

// Takes response's scores (left empty) and returns the serialized message.
grpc::ByteBuffer SerializeResponse(v1::ScoreResponse* response);

}  // namespace gmmscore::server

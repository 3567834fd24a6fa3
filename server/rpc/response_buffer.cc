#include "server/rpc/response_buffer.h"

#include <grpcpp/support/slice.h>

#include <memory>
#include <string>

namespace gmmscore::server {
namespace {

void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

void DeleteString(void* s) { delete static_cast<std::string*>(s); }

}  // namespace

grpc::ByteBuffer SerializeResponse(v1::ScoreResponse* response) {
  auto scores = std::make_unique<std::string>(std::move(*response->mutable_scores()));
  response->clear_scores();
  std::string head;
  response->SerializeToString(&head);
  if (scores->empty()) {  // proto3 leaves an empty bytes field out
    grpc::Slice only(head);
    return grpc::ByteBuffer(&only, 1);
  }
  // The scores field's key (field number, wire type 2: length-delimited) and length.
  constexpr uint32_t kScoresKey = (v1::ScoreResponse::kScoresFieldNumber << 3) | 2;
  AppendVarint(kScoresKey, &head);
  AppendVarint(scores->size(), &head);
  std::string* owned = scores.release();
  grpc::Slice slices[2] = {grpc::Slice(head),
                           grpc::Slice(owned->data(), owned->size(), DeleteString, owned)};
  return grpc::ByteBuffer(slices, 2);
}

}  // namespace gmmscore::server

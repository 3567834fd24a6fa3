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

void ReleaseOwner(void* owner) { delete static_cast<std::shared_ptr<const void>*>(owner); }

}  // namespace

grpc::ByteBuffer SerializeResponse(v1::ScoreResponse* response, SharedBytes scores) {
  if (scores.empty() && !response->scores().empty()) {
    scores = SharedBytes::Own(std::move(*response->mutable_scores()));
  }
  response->clear_scores();
  std::string head;
  response->SerializeToString(&head);
  if (scores.empty()) {  // proto3 leaves an empty bytes field out
    grpc::Slice only(head);
    return grpc::ByteBuffer(&only, 1);
  }
  // The scores field's key (field number, wire type 2: length-delimited) and length.
  constexpr uint32_t kScoresKey = (v1::ScoreResponse::kScoresFieldNumber << 3) | 2;
  AppendVarint(kScoresKey, &head);
  AppendVarint(scores.view.size(), &head);
  auto* owner = new std::shared_ptr<const void>(std::move(scores.owner));
  grpc::Slice slices[2] = {grpc::Slice(head), grpc::Slice(const_cast<char*>(scores.view.data()),
                                                          scores.view.size(), ReleaseOwner, owner)};
  return grpc::ByteBuffer(slices, 2);
}

}  // namespace gmmscore::server

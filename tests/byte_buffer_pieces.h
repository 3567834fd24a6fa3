// A message's bytes as gRPC may hold them, for the tests and fuzz targets of code that reads
// grpc::ByteBuffers: in slices of any size, and back to one string.
#pragma once

#include <grpcpp/support/byte_buffer.h>

#include <algorithm>
#include <string>
#include <vector>

namespace gmmscore::testing {

// `bytes` in slices of `piece` bytes (the last shorter), with an empty slice first if asked.
inline grpc::ByteBuffer InSlices(const std::string& bytes, size_t piece, bool empty_first = false) {
  std::vector<grpc::Slice> slices;
  if (empty_first) slices.emplace_back();
  for (size_t at = 0; at < bytes.size(); at += piece)
    slices.emplace_back(bytes.data() + at, std::min(piece, bytes.size() - at));
  return grpc::ByteBuffer(slices.data(), slices.size());
}

// The buffer's bytes, its slices joined.
inline std::string Join(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  (void)buffer.Dump(&slices);
  std::string out;
  for (const grpc::Slice& s : slices)
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

}  // namespace gmmscore::testing

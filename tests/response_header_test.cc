// ReadResponseHeader against the full parse and decode (client::DecodeResponse): the same first
// frame and frame count for every encoding, and the same verdict on a window whose sizes do not
// add up, from a message in one slice or cut into many.
#include "loadgen/response_header.h"

#include <grpcpp/support/proto_buffer_writer.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "client/scorer_client.h"

namespace gmmscore::testing {
namespace {

// The message's bytes as gRPC would hand them over: in slices of at most `slice` bytes.
grpc::ByteBuffer Bytes(const v1::ScoreResponse& r, size_t slice) {
  const std::string wire = r.SerializeAsString();
  std::vector<grpc::Slice> slices;
  for (size_t at = 0; at < wire.size(); at += slice) {
    slices.emplace_back(wire.data() + at, std::min(slice, wire.size() - at));
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

v1::ScoreResponse Dense(v1::StreamConfig::Encoding encoding, int32_t frames, int32_t states) {
  v1::ScoreResponse r;
  r.set_stream_id("s");
  r.set_first_frame(1230);
  r.set_num_frames(frames);
  r.set_num_states(states);
  r.set_encoding(encoding);
  const size_t width = encoding == v1::StreamConfig::FLOAT32 ? 4 : 2;
  r.mutable_scores()->assign(size_t(frames) * size_t(states) * width, '\0');
  for (int32_t t = 0; t < frames; ++t) {
    r.add_best_state(t % states);
    r.add_best_score(-60.0f - float(t));
  }
  r.add_models()->set_name("m");
  return r;
}

v1::ScoreResponse Sparse(const std::vector<uint32_t>& counts) {
  v1::ScoreResponse r;
  r.set_first_frame(7);
  r.set_num_frames(int32_t(counts.size()));
  r.set_num_states(5000);
  r.set_encoding(v1::StreamConfig::BEAM_SPARSE);
  size_t total = 0;
  for (uint32_t c : counts) {
    r.add_sparse_counts(c);
    total += c;
    r.add_best_state(1);
    r.add_best_score(-1.0f);
  }
  r.mutable_scores()->assign(total * 4, '\0');
  r.mutable_sparse_states()->assign(total * 4, '\0');
  return r;
}

// Both readers agree on r, read from one slice and from 7-byte slices; returns the header's
// verdict.
absl::StatusOr<ResponseHeader> ReadBothWays(const v1::ScoreResponse& r) {
  client::ScoreWindow window;
  const absl::Status decoded = client::DecodeResponse(r, {}, &window);
  absl::StatusOr<ResponseHeader> first;
  for (size_t slice : {size_t(1) << 30, size_t(7)}) {
    grpc::ByteBuffer bytes = Bytes(r, slice);
    absl::StatusOr<ResponseHeader> h = ReadResponseHeader(&bytes);
    EXPECT_EQ(h.ok(), decoded.ok()) << h.status() << " / " << decoded;
    if (h.ok() && decoded.ok()) {
      EXPECT_EQ(h->first_frame, window.first_frame);
      EXPECT_EQ(h->num_frames, window.scores.rows);
      EXPECT_EQ(h->num_states, r.num_states());
      EXPECT_EQ(h->encoding, r.encoding());
    }
    if (slice != 7) first = std::move(h);
  }
  return first;
}

TEST(ResponseHeaderTest, ReadsEveryEncoding) {
  for (auto encoding :
       {v1::StreamConfig::FLOAT32, v1::StreamConfig::FLOAT16, v1::StreamConfig::RELATIVE16}) {
    for (auto [frames, states] : {std::pair{10, 5000}, {1, 7}, {3, 1}}) {
      auto h = ReadBothWays(Dense(encoding, frames, states));
      ASSERT_TRUE(h.ok()) << h.status();
      EXPECT_EQ(h->first_frame, 1230);
      EXPECT_EQ(h->num_frames, frames);
    }
  }
  auto h = ReadBothWays(Sparse({3, 0, 500, 1}));
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->first_frame, 7);
  EXPECT_EQ(h->num_frames, 4);
}

TEST(ResponseHeaderTest, RefusesSizesThatDoNotAddUp) {
  v1::ScoreResponse r = Dense(v1::StreamConfig::RELATIVE16, 10, 50);
  r.mutable_scores()->resize(r.scores().size() - 2);
  auto h = ReadBothWays(r);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(h.status().message().find("frames 1230+10: score bytes"), std::string::npos)
      << h.status();

  r = Dense(v1::StreamConfig::FLOAT32, 4, 9);
  r.mutable_best_score()->RemoveLast();
  EXPECT_FALSE(ReadBothWays(r).ok());

  r = Dense(v1::StreamConfig::FLOAT16, 4, 9);
  r.set_num_states(10);
  EXPECT_FALSE(ReadBothWays(r).ok());

  r = Sparse({3, 2});
  r.mutable_sparse_states()->append(4, '\0');
  EXPECT_FALSE(ReadBothWays(r).ok());
  r = Sparse({3, 2});
  r.mutable_sparse_counts()->RemoveLast();
  EXPECT_FALSE(ReadBothWays(r).ok());
}

TEST(ResponseHeaderTest, RefusesWhatIsNotAResponse) {
  const std::string wire = Dense(v1::StreamConfig::RELATIVE16, 10, 500).SerializeAsString();
  // Cut inside the scores: the field's length runs past the end.
  for (const std::string& bytes : {wire.substr(0, wire.size() / 2), std::string("\xff\xff\xff")}) {
    grpc::Slice slice(bytes.data(), bytes.size());
    grpc::ByteBuffer buffer(&slice, 1);
    auto h = ReadResponseHeader(&buffer);
    ASSERT_FALSE(h.ok());
    EXPECT_NE(h.status().message().find("not a ScoreResponse"), std::string::npos) << h.status();
  }
  v1::ScoreResponse r = Dense(v1::StreamConfig::FLOAT32, 1, 1);
  r.set_encoding(v1::StreamConfig::Encoding(9));
  grpc::ByteBuffer bytes = Bytes(r, 100);
  auto h = ReadResponseHeader(&bytes);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("unknown encoding 9"), std::string::npos) << h.status();
}

}  // namespace
}  // namespace gmmscore::testing

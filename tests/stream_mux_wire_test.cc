// ScoreStreams' entries read and written around their payloads (proto/stream_mux_wire.h) agree
// with protobuf's generated classes both ways, whatever slices gRPC received a message in, and
// bytes that do not parse are refused.
#include "proto/stream_mux_wire.h"

#include <gtest/gtest.h>

#include "gmmscore/v1/scorer.pb.h"
#include "tests/byte_buffer_pieces.h"

namespace gmmscore::wire {
namespace {

using ::gmmscore::testing::InSlices;
using ::gmmscore::testing::Join;

TEST(StreamMuxWireTest, ReadsWhatProtobufWritesInAnySlices) {
  v1::ScoreStreamsRequest message;
  v1::StreamRequest* a = message.add_requests();
  a->set_tag(uint64_t(1) << 40);
  a->mutable_request()->mutable_config()->set_stream_id("a");
  v1::StreamRequest* b = message.add_requests();
  b->set_tag(3);
  b->mutable_request()->mutable_features()->set_data(std::string(1000, 'x'));
  b->set_writes_done(true);
  message.add_requests()->set_cancel(true);
  const std::string bytes = message.SerializeAsString();
  for (size_t piece : {size_t(1), size_t(7), size_t(64), bytes.size()}) {
    auto entries = ReadStreamsRequest(InSlices(bytes, piece, piece == 7));
    ASSERT_TRUE(entries.ok()) << entries.status();
    ASSERT_EQ(entries->size(), 3u);
    EXPECT_EQ((*entries)[0].tag, uint64_t(1) << 40);
    EXPECT_TRUE((*entries)[0].has_request);
    EXPECT_TRUE((*entries)[0].holds_config);
    EXPECT_EQ(Join((*entries)[0].request), a->request().SerializeAsString());
    EXPECT_EQ((*entries)[1].tag, 3u);
    EXPECT_FALSE((*entries)[1].holds_config);
    EXPECT_EQ(Join((*entries)[1].request), b->request().SerializeAsString()) << piece;
    EXPECT_TRUE((*entries)[1].writes_done);
    EXPECT_FALSE((*entries)[1].cancel);
    EXPECT_EQ((*entries)[2].tag, 0u);
    EXPECT_FALSE((*entries)[2].has_request);
    EXPECT_TRUE((*entries)[2].cancel);
  }
}

TEST(StreamMuxWireTest, WritesWhatProtobufReads) {
  v1::ScoreRequest request;
  request.mutable_features()->set_first_frame(20);
  request.mutable_features()->set_data(std::string(300, 'f'));
  const std::string r = request.SerializeAsString();
  const std::string sent = StreamRequestHeader(9, true, r.size(), true, false) + r +
                           StreamRequestHeader(10, false, 0, false, true);
  v1::ScoreStreamsRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(sent));
  ASSERT_EQ(parsed.requests_size(), 2);
  EXPECT_EQ(parsed.requests(0).tag(), 9u);
  EXPECT_EQ(parsed.requests(0).request().features().first_frame(), 20);
  EXPECT_EQ(parsed.requests(0).request().features().data(), std::string(300, 'f'));
  EXPECT_TRUE(parsed.requests(0).writes_done());
  EXPECT_EQ(parsed.requests(1).tag(), 10u);
  EXPECT_FALSE(parsed.requests(1).has_request());
  EXPECT_TRUE(parsed.requests(1).cancel());

  v1::ScoreResponse response;
  response.set_stream_id("s");
  response.set_num_frames(10);
  response.set_scores(std::string(200000, 's'));  // a length of three varint bytes
  const std::string body = response.SerializeAsString();
  const std::string replies = StreamReplyHeader(uint64_t(1) << 33, body.size()) + body +
                              StreamStatusReply(4, -1, "negative") +
                              StreamStatusReply(5, 3, "stream 'x': bad");
  v1::ScoreStreamsResponse out;
  ASSERT_TRUE(out.ParseFromString(replies));
  ASSERT_EQ(out.replies_size(), 3);
  EXPECT_EQ(out.replies(0).tag(), uint64_t(1) << 33);
  EXPECT_EQ(out.replies(0).response().scores(), response.scores());
  EXPECT_EQ(out.replies(1).status().code(), -1);
  EXPECT_EQ(out.replies(2).status().code(), 3);
  EXPECT_EQ(out.replies(2).status().message(), "stream 'x': bad");
  auto views = ReadStreamsResponse(InSlices(replies, 8192));
  ASSERT_TRUE(views.ok()) << views.status();
  ASSERT_EQ(views->size(), 3u);
  EXPECT_TRUE((*views)[0].has_response);
  EXPECT_EQ(Join((*views)[0].response), body);
  EXPECT_TRUE((*views)[1].has_status);
  EXPECT_EQ((*views)[1].code, -1);
  EXPECT_EQ((*views)[1].message, "negative");
  EXPECT_EQ((*views)[2].message, "stream 'x': bad");
}

TEST(StreamMuxWireTest, RefusesBytesThatDoNotParse) {
  v1::ScoreStreamsRequest message;
  v1::StreamRequest* a = message.add_requests();
  a->set_tag(1);
  a->mutable_request()->mutable_features()->set_data(std::string(100, 'x'));
  const std::string bytes = message.SerializeAsString();
  for (size_t cut = 1; cut < bytes.size(); ++cut) {
    EXPECT_FALSE(ReadStreamsRequest(InSlices(bytes.substr(0, cut), 5)).ok()) << cut;
  }
  // An entry claiming 2^35 bytes; a varint of 11 bytes; a group; field number 0.
  for (const std::string& bad : {std::string("\x0a\xff\xff\xff\xff\x7f", 6),
                                 std::string("\x08") + std::string(10, '\xff') + "\x01",
                                 std::string("\x0b\x0c", 2), std::string("\x02\x00", 2)}) {
    auto refused = ReadStreamsRequest(InSlices(bad, 3));
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(refused.status().message().find("from byte 0"), std::string::npos)
        << refused.status();
  }
  EXPECT_FALSE(ReadStreamsResponse(InSlices(std::string("\x0a\x05\x08", 3), 2)).ok());
  EXPECT_TRUE(ReadStreamsRequest(grpc::ByteBuffer()).ok());  // no entries
}

}  // namespace
}  // namespace gmmscore::wire

// ScoreStreams: many Score streams on one call, through a real gmmscored on a loopback port. Each
// stream's scores equal offline scoring, as on a Score call of its own, however the client
// interleaves the streams' messages; one stream's error ends that stream only; a tag is free again
// after its status; requests for a stream that ended are dropped; a cancelled call gives every
// slot back.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <map>
#include <thread>

#include "gmmscore/v1/scorer.grpc.pb.h"
#include "proto/wire_codec.h"
#include "tests/server_test_util.h"

namespace gmmscore::testing {
namespace {

// One stream's replies as the client collected them.
struct Collected {
  Matrix scores;
  int32_t windows = 0;
  grpc::StatusCode code = grpc::StatusCode::OK;
  std::string message;
  int32_t statuses = 0;
};

class ServerStreamMuxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = StartServer(LoopbackConfig());
    ASSERT_NE(server_, nullptr);
    stub_ = v1::Scorer::NewStub(Connect(server_->port()));
  }

  using Call = grpc::ClientReaderWriter<v1::ScoreStreamsRequest, v1::ScoreStreamsResponse>;

  // Reads the call's replies into `out` by tag until the server ends it; counts the statuses in
  // statuses_ as they come.
  std::thread Reader(Call* call, std::map<uint64_t, Collected>* out) {
    return std::thread([this, call, out] {
      v1::ScoreStreamsResponse response;
      while (call->Read(&response)) {
        ++messages_;
        for (const v1::StreamReply& reply : response.replies()) {
          Collected& c = (*out)[reply.tag()];
          if (reply.has_status()) {
            ++c.statuses;
            ++statuses_;
            c.code = grpc::StatusCode(reply.status().code());
            c.message = reply.status().message();
            continue;
          }
          client::ScoreWindow w;
          const absl::Status decoded = client::DecodeResponse(reply.response(), {}, &w);
          EXPECT_TRUE(decoded.ok()) << decoded;
          c.scores.cols = w.scores.cols;
          c.scores.rows += w.scores.rows;
          c.scores.data.insert(c.scores.data.end(), w.scores.data.begin(), w.scores.data.end());
          ++c.windows;
          ++windows_;
        }
      }
    });
  }

  static v1::StreamRequest* Add(v1::ScoreStreamsRequest* r, uint64_t tag) {
    v1::StreamRequest* e = r->add_requests();
    e->set_tag(tag);
    return e;
  }

  static void AddFeatures(v1::ScoreStreamsRequest* r, uint64_t tag, const Matrix& feats,
                          int32_t first, int32_t n) {
    v1::FeatureChunk* chunk = Add(r, tag)->mutable_request()->mutable_features();
    chunk->set_first_frame(first);
    wire::AppendFloat32({feats.row(first), size_t(n) * size_t(feats.cols)}, chunk->mutable_data());
  }

  std::unique_ptr<server::GmmscoreServer> server_;
  std::unique_ptr<v1::Scorer::Stub> stub_;
  std::atomic<int> statuses_{0};
  std::atomic<int> windows_{0};
  std::atomic<int> messages_{0};  // messages read, of every call
};

TEST_F(ServerStreamMuxTest, ManyStreamsOnOneCallEachEqualOfflineScores) {
  std::vector<std::pair<std::string, Matrix>> utterances(MonoFeatures().begin(),
                                                         MonoFeatures().end());
  constexpr int kStreams = 7;
  grpc::ClientContext context;
  auto call = stub_->ScoreStreams(&context);
  std::map<uint64_t, Collected> got;
  std::thread reader = Reader(call.get(), &got);
  // Streams of different windows and chunk sizes, their chunks interleaved: each message
  // carries the next chunk of every stream still sending (a stream's config with its first).
  std::vector<int32_t> sent(kStreams, 0);
  for (bool more = true; more;) {
    more = false;
    v1::ScoreStreamsRequest message;
    for (int i = 0; i < kStreams; ++i) {
      const Matrix& feats = utterances[size_t(i) % utterances.size()].second;
      const uint64_t tag = 100 + uint64_t(i) * 1000;  // tags need not be small or dense
      if (sent[i] == 0) {
        v1::StreamConfig config = StreamConfigFor("mux-" + std::to_string(i), 1 + 3 * i);
        config.set_max_latency_ms(10000);
        *Add(&message, tag)->mutable_request()->mutable_config() = config;
      }
      if (sent[i] == feats.rows) continue;
      const int32_t n = std::min(5 + 2 * i, feats.rows - sent[i]);
      AddFeatures(&message, tag, feats, sent[i], n);
      sent[i] += n;
      if (sent[i] == feats.rows) {
        Add(&message, tag)->mutable_request()->mutable_end();
        Add(&message, tag)->set_writes_done(true);
      }
      more = true;
    }
    if (message.requests_size() > 0) {
      ASSERT_TRUE(call->Write(message));
    }
  }
  // The server has every stream's End; the call ends OK once they have all ended.
  ASSERT_TRUE(WaitFor([&] { return server_->open_streams() == 0; }));
  call->WritesDone();
  reader.join();
  const grpc::Status status = call->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(got.size(), size_t(kStreams));
  for (int i = 0; i < kStreams; ++i) {
    const auto& [key, feats] = utterances[size_t(i) % utterances.size()];
    const Collected& c = got[100 + uint64_t(i) * 1000];
    EXPECT_EQ(c.code, grpc::StatusCode::OK) << c.message;
    EXPECT_EQ(c.statuses, 1);
    EXPECT_EQ(c.windows, (feats.rows + 3 * i) / (1 + 3 * i)) << "stream " << i;
    EXPECT_EQ(c.scores, OfflineScores(MonoModelPath(), feats)) << "stream " << i;
  }
  // Every message the call wrote is counted once.
  EXPECT_EQ(server_->metrics().stream_messages_sent.Value(), double(messages_));
}

TEST_F(ServerStreamMuxTest, OneStreamsErrorEndsThatStreamOnly) {
  const Matrix& feats = MonoFeatures().at("cards-001");
  grpc::ClientContext context;
  auto call = stub_->ScoreStreams(&context);
  std::map<uint64_t, Collected> got;
  std::thread reader = Reader(call.get(), &got);
  v1::ScoreStreamsRequest first;
  *Add(&first, 1)->mutable_request()->mutable_config() = StreamConfigFor("good", 10);
  *Add(&first, 2)->mutable_request()->mutable_config() = StreamConfigFor("bad", 10);
  AddFeatures(&first, 1, feats, 0, 20);
  // 20 frames of 39 values sent as 30 rows of 26: the wrong dimension for stream 2.
  v1::FeatureChunk* wrong = Add(&first, 2)->mutable_request()->mutable_features();
  wire::AppendFloat32({feats.row(0), size_t(20 * 39)}, wrong->mutable_data());
  wrong->mutable_data()->resize(size_t(20 * 39 * 4 - 4));
  ASSERT_TRUE(call->Write(first));
  ASSERT_TRUE(WaitFor([&] { return server_->open_streams() == 1; }));
  // More for the stream that failed is dropped: no second status.
  v1::ScoreStreamsRequest rest;
  AddFeatures(&rest, 2, feats, 0, 10);
  AddFeatures(&rest, 1, feats, 20, feats.rows - 20);
  Add(&rest, 1)->mutable_request()->mutable_end();
  Add(&rest, 1)->set_writes_done(true);
  ASSERT_TRUE(call->Write(rest));
  call->WritesDone();
  reader.join();
  EXPECT_TRUE(call->Finish().ok());
  EXPECT_EQ(got[2].code, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(got[2].message.find("stream 'bad'"), std::string::npos) << got[2].message;
  EXPECT_EQ(got[2].statuses, 1);
  EXPECT_EQ(got[2].windows, 0);
  EXPECT_EQ(got[1].code, grpc::StatusCode::OK) << got[1].message;
  EXPECT_EQ(got[1].scores, OfflineScores(MonoModelPath(), feats));
}

TEST_F(ServerStreamMuxTest, ATagIsFreeAgainAfterItsStatus) {
  const Matrix& feats = MonoFeatures().at("lib-0880");
  const Matrix offline = OfflineScores(MonoModelPath(), feats);
  grpc::ClientContext context;
  auto call = stub_->ScoreStreams(&context);
  std::map<uint64_t, Collected> got;
  std::thread reader = Reader(call.get(), &got);
  for (int round = 0; round < 2; ++round) {
    v1::ScoreStreamsRequest message;
    *Add(&message, 7)->mutable_request()->mutable_config() = StreamConfigFor("again", 10);
    AddFeatures(&message, 7, feats, 0, feats.rows);
    Add(&message, 7)->set_writes_done(true);
    ASSERT_TRUE(call->Write(message));
    // The tag is free once its status is in.
    ASSERT_TRUE(WaitFor([&] { return statuses_ == round + 1; }));
  }
  call->WritesDone();
  reader.join();
  EXPECT_TRUE(call->Finish().ok());
  const Collected& c = got[7];
  EXPECT_EQ(c.statuses, 2);
  EXPECT_EQ(c.code, grpc::StatusCode::OK) << c.message;
  ASSERT_EQ(c.scores.rows, 2 * feats.rows);
  EXPECT_EQ(Rows(c.scores, feats.rows, feats.rows), offline);
}

TEST_F(ServerStreamMuxTest, ACancelledCallGivesEverySlotBack) {
  const Matrix& feats = MonoFeatures().at("cards-003");
  grpc::ClientContext context;
  auto call = stub_->ScoreStreams(&context);
  v1::ScoreStreamsRequest message;
  for (uint64_t tag = 1; tag <= 5; ++tag) {
    *Add(&message, tag)->mutable_request()->mutable_config() =
        StreamConfigFor("cancelled-" + std::to_string(tag), 10);
    AddFeatures(&message, tag, feats, 0, 25);
  }
  // A stream the client cancels ends without a status.
  Add(&message, 5)->set_cancel(true);
  ASSERT_TRUE(call->Write(message));
  ASSERT_TRUE(WaitFor([&] { return server_->open_streams() == 4; })) << server_->open_streams();
  context.TryCancel();
  EXPECT_EQ(call->Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(WaitFor([&] { return server_->open_streams() == 0; }));
}

TEST_F(ServerStreamMuxTest, TheCallEndsOkWhenItsStreamsHaveEnded) {
  grpc::ClientContext context;
  auto call = stub_->ScoreStreams(&context);
  std::map<uint64_t, Collected> got;
  std::thread reader = Reader(call.get(), &got);
  v1::ScoreStreamsRequest message;
  *Add(&message, 3)->mutable_request()->mutable_config() = StreamConfigFor("open", 10);
  ASSERT_TRUE(call->Write(message));
  ASSERT_TRUE(WaitFor([&] { return server_->open_streams() == 1; }));
  // The client's half-close of the call half-closes every stream on it.
  call->WritesDone();
  reader.join();
  EXPECT_TRUE(call->Finish().ok());
  EXPECT_EQ(got[3].code, grpc::StatusCode::OK) << got[3].message;
  EXPECT_EQ(server_->open_streams(), 0);
}

TEST_F(ServerStreamMuxTest, ADrainEndsEveryStreamUnavailableAfterItsScores) {
  const Matrix& feats = MonoFeatures().at("lib-0880");
  grpc::ClientContext context;
  auto call = stub_->ScoreStreams(&context);
  std::map<uint64_t, Collected> got;
  std::thread reader = Reader(call.get(), &got);
  v1::ScoreStreamsRequest message;
  for (uint64_t tag = 1; tag <= 2; ++tag) {
    *Add(&message, tag)->mutable_request()->mutable_config() =
        StreamConfigFor("draining-" + std::to_string(tag), 10);
    AddFeatures(&message, tag, feats, 0, 20);
  }
  ASSERT_TRUE(call->Write(message));
  ASSERT_TRUE(WaitFor([&] { return windows_ == 4; }));
  EXPECT_TRUE(server_->Drain(absl::Seconds(5)));
  reader.join();
  // The call itself ends UNAVAILABLE once its streams have (or CANCELLED, where the server's
  // shutdown, which follows the last stream's end at once, is first).
  const grpc::StatusCode call_code = call->Finish().error_code();
  EXPECT_TRUE(call_code == grpc::StatusCode::UNAVAILABLE ||
              call_code == grpc::StatusCode::CANCELLED)
      << call_code;
  for (uint64_t tag = 1; tag <= 2; ++tag) {
    EXPECT_EQ(got[tag].code, grpc::StatusCode::UNAVAILABLE) << got[tag].message;
    EXPECT_NE(got[tag].message.find("frame 20"), std::string::npos) << got[tag].message;
    EXPECT_EQ(got[tag].scores, Rows(OfflineScores(MonoModelPath(), feats), 0, 20));
  }
}

TEST_F(ServerStreamMuxTest, AMessageThatDoesNotParseEndsTheCall) {
  grpc::GenericStub generic(Connect(server_->port()));
  grpc::ClientContext context;
  grpc::CompletionQueue cq;
  auto call = generic.PrepareCall(&context, "/gmmscore.v1.Scorer/ScoreStreams", &cq);
  void* tag = nullptr;
  bool ok = false;
  call->StartCall(reinterpret_cast<void*>(1));
  ASSERT_TRUE(cq.Next(&tag, &ok) && ok);
  // An entry that claims more bytes than the message has.
  const std::string junk("\x0a\x7f\x08\x01", 4);
  grpc::Slice slice(junk);
  grpc::ByteBuffer bytes(&slice, 1);
  call->Write(bytes, reinterpret_cast<void*>(2));
  ASSERT_TRUE(cq.Next(&tag, &ok));
  grpc::ByteBuffer response;
  call->Read(&response, reinterpret_cast<void*>(3));
  ASSERT_TRUE(cq.Next(&tag, &ok));
  EXPECT_FALSE(ok);  // no reply: the call ends
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(4));
  ASSERT_TRUE(cq.Next(&tag, &ok));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("ScoreStreams message 1"), std::string::npos)
      << status.error_message();
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
}

}  // namespace
}  // namespace gmmscore::testing

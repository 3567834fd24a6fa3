// Every protocol error gets its documented status (scorer.proto) naming the stream, while a
// stream beside it goes on and still gets exactly the offline scores.
#include <grpcpp/generic/generic_stub.h>

#include <cmath>
#include <limits>

#include "proto/wire_codec.h"
#include "tests/server_test_util.h"

namespace gmmscore::testing {
namespace {

using v1::ScoreRequest;

ScoreRequest Config(const v1::StreamConfig& config) {
  ScoreRequest r;
  *r.mutable_config() = config;
  return r;
}

ScoreRequest Features(int64_t first_frame, const Matrix& frames) {
  ScoreRequest r;
  r.mutable_features()->set_first_frame(first_frame);
  wire::AppendFloat32(frames.data, r.mutable_features()->mutable_data());
  return r;
}

ScoreRequest EndRequest() {
  ScoreRequest r;
  r.mutable_end();
  return r;
}

// Sends requests on a raw stream (writes may fail once the server has ended the call), half-
// closes, reads everything, and returns the final status.
grpc::Status RunRaw(const std::shared_ptr<grpc::Channel>& channel,
                    const std::vector<ScoreRequest>& requests) {
  auto stub = v1::Scorer::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  auto stream = stub->Score(&context);
  for (const ScoreRequest& r : requests) {
    if (!stream->Write(r)) break;
  }
  stream->WritesDone();
  v1::ScoreResponse response;
  while (stream->Read(&response)) {
  }
  return stream->Finish();
}

// Sends messages as raw bytes (valid or not) on a Score call, half-closes, reads everything, and
// returns the final status.
grpc::Status RunBytes(const std::shared_ptr<grpc::Channel>& channel,
                      const std::vector<std::string>& messages) {
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  // One operation at a time, so the next event is that operation's.
  const auto await = [&cq] {
    void* tag = nullptr;
    bool ok = false;
    return cq.Next(&tag, &ok) && ok;
  };
  auto call = stub.PrepareCall(&context, "/gmmscore.v1.Scorer/Score", &cq);
  call->StartCall(nullptr);
  bool open = await();
  for (const std::string& m : messages) {
    if (!open) break;
    grpc::Slice slice(m);
    grpc::ByteBuffer buffer(&slice, 1);
    call->Write(buffer, nullptr);
    open = await();
  }
  call->WritesDone(nullptr);
  await();
  grpc::ByteBuffer response;
  do {
    call->Read(&response, nullptr);
  } while (await());
  grpc::Status status;
  call->Finish(&status, nullptr);
  await();
  cq.Shutdown();
  return status;
}

class ServerProtocolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server::ServerConfig config = LoopbackConfig();
    config.stream.max_frames_per_chunk = 100;
    config.max_message_bytes = 64 << 10;
    config.stream.max_response_bytes = 64 << 10;
    config.max_streams = 8;
    server_ = StartServer(config);
    ASSERT_NE(server_, nullptr);
    channel_ = Connect(server_->port());
    // The witness: a stream that runs through every error case and must not notice them.
    feats_ = MonoFeatures().at("cards-001");
    offline_ = OfflineScores(MonoModelPath(), feats_);
    client::ScoreStream::Options options;
    options.chunk_frames = 10;
    auto witness = client::ScoreStream::Open(channel_, StreamConfigFor("witness", 10), options);
    ASSERT_TRUE(witness.ok());
    witness_ = *std::move(witness);
    ASSERT_TRUE(witness_->Push(Rows(feats_, 0, 40)).ok());
  }

  void TearDown() override {
    ASSERT_TRUE(witness_->Push(Rows(feats_, 40, feats_.rows - 40)).ok());
    ASSERT_TRUE(witness_->End().ok());
    ASSERT_TRUE(witness_->Finish().ok());
    ASSERT_EQ(witness_->NumFramesReady(), feats_.rows);
    for (int32_t t = 0; t < feats_.rows; ++t) {
      for (int32_t s = 0; s < offline_.cols; ++s) {
        ASSERT_EQ(witness_->LogLikelihood(t, s), offline_.at(t, s)) << t << " " << s;
      }
    }
  }

  void ExpectStatus(const std::vector<ScoreRequest>& requests, grpc::StatusCode code,
                    const std::string& message_part) {
    const grpc::Status status = RunRaw(channel_, requests);
    EXPECT_EQ(status.error_code(), code) << status.error_message();
    EXPECT_NE(status.error_message().find(message_part), std::string::npos)
        << status.error_message();
  }

  std::unique_ptr<server::GmmscoreServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  Matrix feats_, offline_;
  std::unique_ptr<client::ScoreStream> witness_;
};

TEST_F(ServerProtocolTest, FeaturesBeforeTheConfig) {
  ExpectStatus({Features(0, Rows(feats_, 0, 5))}, grpc::StatusCode::FAILED_PRECONDITION,
               "the first message must be a StreamConfig");
  ExpectStatus({EndRequest()}, grpc::StatusCode::FAILED_PRECONDITION, "End before");
  ExpectStatus({}, grpc::StatusCode::FAILED_PRECONDITION, "closed before its StreamConfig");
  EXPECT_EQ(server_->metrics().failures(server::FailureReason::kProtocol), 3);
}

TEST_F(ServerProtocolTest, ASecondConfig) {
  ExpectStatus({Config(StreamConfigFor("twice", 10)), Config(StreamConfigFor("twice", 10))},
               grpc::StatusCode::FAILED_PRECONDITION, "stream 'twice': a second StreamConfig");
}

TEST_F(ServerProtocolTest, WrongDimension) {
  ExpectStatus({Config(StreamConfigFor("dim13", 10, "mono", 13))},
               grpc::StatusCode::INVALID_ARGUMENT,
               "stream 'dim13': the config says dimension 13, model 'mono' has dimension 39");
}

TEST_F(ServerProtocolTest, UnknownModel) {
  ExpectStatus({Config(StreamConfigFor("who", 10, "nope"))}, grpc::StatusCode::NOT_FOUND,
               "stream 'who': no model 'nope'");
  EXPECT_EQ(server_->metrics().failures(server::FailureReason::kUnknownModel), 1);
}

TEST_F(ServerProtocolTest, FramesAfterEnd) {
  ExpectStatus({Config(StreamConfigFor("late", 10)), Features(0, Rows(feats_, 0, 5)), EndRequest(),
                Features(5, Rows(feats_, 5, 5))},
               grpc::StatusCode::FAILED_PRECONDITION,
               "stream 'late': features (frame 5) after End");
}

TEST_F(ServerProtocolTest, BytesThatAreNotAScoreRequest) {
  // A length-delimited field 1 (config) that claims 5 bytes and has 2.
  const grpc::Status status = RunBytes(
      channel_, {Config(StreamConfigFor("junk", 10)).SerializeAsString(), std::string("\x0a\x05"
                                                                                      "ab",
                                                                                      4)});
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_NE(status.error_message().find("stream 'junk': message 2 of the stream is not a "
                                        "ScoreRequest"),
            std::string::npos)
      << status.error_message();
}

TEST_F(ServerProtocolTest, OversizedChunk) {
  ExpectStatus({Config(StreamConfigFor("big", 10)), Features(0, Rows(feats_, 0, 101))},
               grpc::StatusCode::INVALID_ARGUMENT,
               "101 frames, more than --max-frames-per-chunk 100");
}

TEST_F(ServerProtocolTest, MessageLargerThanTheLimit) {
  Matrix frames(500, 39);  // 78 000 bytes, over the 64 KiB limit
  ExpectStatus({Config(StreamConfigFor("huge", 10)), Features(0, frames)},
               grpc::StatusCode::RESOURCE_EXHAUSTED, "");
}

TEST_F(ServerProtocolTest, NonFiniteFeatures) {
  Matrix frames = Rows(feats_, 0, 20);
  frames.at(12, 5) = std::numeric_limits<float>::quiet_NaN();
  ExpectStatus(
      {Config(StreamConfigFor("nan", 10)), Features(0, Rows(feats_, 0, 20)), Features(20, frames)},
      grpc::StatusCode::INVALID_ARGUMENT, "stream 'nan': frame 32, dimension 5: value nan");
  frames.at(12, 5) = std::numeric_limits<float>::infinity();
  ExpectStatus({Config(StreamConfigFor("inf", 10)), Features(0, frames)},
               grpc::StatusCode::INVALID_ARGUMENT, "frame 12, dimension 5: value inf");
}

TEST_F(ServerProtocolTest, ChunksThatDoNotFit) {
  ScoreRequest ragged = Features(0, Rows(feats_, 0, 2));
  ragged.mutable_features()->mutable_data()->resize(2 * 39 * 4 - 3);
  ExpectStatus({Config(StreamConfigFor("ragged", 10)), ragged}, grpc::StatusCode::INVALID_ARGUMENT,
               "not a whole number of 39-dimensional");
  ExpectStatus({Config(StreamConfigFor("gap", 10)), Features(0, Rows(feats_, 0, 5)),
                Features(6, Rows(feats_, 6, 5))},
               grpc::StatusCode::INVALID_ARGUMENT,
               "a chunk starts at frame 6; the next frame is 5");
  ExpectStatus({Config(StreamConfigFor("empty", 10)), ScoreRequest()},
               grpc::StatusCode::INVALID_ARGUMENT, "an empty ScoreRequest");
}

TEST_F(ServerProtocolTest, BadConfigValues) {
  v1::StreamConfig config = StreamConfigFor("window", 5000);
  ExpectStatus({Config(config)}, grpc::StatusCode::INVALID_ARGUMENT, "window_frames 5000");
  config = StreamConfigFor("beam", 10);
  config.set_encoding(v1::StreamConfig::BEAM_SPARSE);
  ExpectStatus({Config(config)}, grpc::StatusCode::INVALID_ARGUMENT, "BEAM_SPARSE needs a beam");
  config = StreamConfigFor("subset", 10);
  config.add_state_subset(56);
  ExpectStatus({Config(config)}, grpc::StatusCode::INVALID_ARGUMENT, "state_subset names state 56");
  config = StreamConfigFor("weights", 10);
  config.set_fusion(v1::StreamConfig::LOG_ADD);
  config.add_weights(0.5f);
  config.add_weights(0.5f);
  ExpectStatus({Config(config)}, grpc::StatusCode::INVALID_ARGUMENT, "2 fusion weights for 1");
  config = StreamConfigFor("", 10);
  config.clear_models();
  ExpectStatus({Config(config)}, grpc::StatusCode::INVALID_ARGUMENT, "names no model");
  EXPECT_EQ(server_->metrics().failures(server::FailureReason::kInvalidArgument), 5);
}

// Every size a client controls is bounded before anything is allocated for it.
TEST_F(ServerProtocolTest, ClientControlledSizesAreBounded) {
  v1::StreamConfig config = StreamConfigFor("select", 10);
  config.set_fusion(v1::StreamConfig::SELECT);
  config.set_select_window(2147483647);
  ExpectStatus({Config(config)}, grpc::StatusCode::INVALID_ARGUMENT,
               "select_window 2147483647 is more than 10000 frames (--max-select-window)");
  config = StreamConfigFor("twice", 10);
  config.add_models("mono");
  ExpectStatus({Config(config)}, grpc::StatusCode::INVALID_ARGUMENT, "model 'mono' is named twice");
  config = StreamConfigFor("many", 10);
  for (int i = 0; i < 10000; ++i) config.add_models("mono");
  ExpectStatus({Config(config)}, grpc::StatusCode::INVALID_ARGUMENT,
               "names 10001 models, at most 8 (--max-models-per-stream)");
  // A long unknown name is refused as a name, not echoed back.
  config = StreamConfigFor("long", 10, std::string(30000, 'x'));
  const grpc::Status long_name = RunRaw(channel_, {Config(config)});
  EXPECT_EQ(long_name.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LT(long_name.error_message().size(), 1000u) << long_name.error_message().size();
  config = StreamConfigFor("subset", 10);
  for (int i = 0; i < 6000; ++i) config.add_state_subset(i % 56);
  ExpectStatus({Config(config)}, grpc::StatusCode::INVALID_ARGUMENT,
               "state_subset has 6000 entries; the model has 56 states");
  // 1000 frames x 56 states x 4 bytes fit in the 4 MiB default; with a 64 KiB limit they do not.
  config = StreamConfigFor("response", 1000);
  ExpectStatus({Config(config)}, grpc::StatusCode::INVALID_ARGUMENT,
               "more than --max-response-bytes 65536");
  EXPECT_EQ(server_->metrics().failures(server::FailureReason::kInvalidArgument), 6);
}

// Finite but absurd values (3e38) would give NaN and -inf scores: they are refused, named.
TEST_F(ServerProtocolTest, FeaturesOutsideTheDocumentedRange) {
  Matrix frames = Rows(feats_, 0, 20);
  frames.at(7, 3) = 3e38f;
  ExpectStatus({Config(StreamConfigFor("absurd", 10)), Features(0, frames)},
               grpc::StatusCode::INVALID_ARGUMENT,
               "stream 'absurd': frame 7, dimension 3: value 3e+38 is outside +-1e+15");
  frames.at(7, 3) = -1e15f;  // the edge of the range is scored
  auto scores = StreamScores(channel_, StreamConfigFor("edge", 10), frames, 20);
  ASSERT_TRUE(scores.ok()) << scores.status();
  for (float x : scores->data) EXPECT_FALSE(std::isnan(x));
}

TEST_F(ServerProtocolTest, TooManyStreams) {
  // The witness holds one of the 8 slots.
  std::vector<std::unique_ptr<client::ScoreStream>> open;
  for (int i = 0; i < 7; ++i) {
    auto s = client::ScoreStream::Open(channel_, StreamConfigFor("slot", 10), {});
    ASSERT_TRUE(s.ok());
    open.push_back(*std::move(s));
  }
  ASSERT_TRUE(WaitFor([&] { return server_->open_streams() == 8; }));
  ExpectStatus({Config(StreamConfigFor("ninth", 10))}, grpc::StatusCode::RESOURCE_EXHAUSTED,
               "--max-streams");
  // A slot given back (here by a cancel) takes the next stream.
  open.back()->Cancel();
  EXPECT_EQ(open.back()->Finish().code(), absl::StatusCode::kCancelled);
  ASSERT_TRUE(WaitFor([&] { return server_->open_streams() == 7; }));
  auto scores = StreamScores(channel_, StreamConfigFor("again", 10), Rows(feats_, 0, 15), 15);
  EXPECT_TRUE(scores.ok()) << scores.status();
  for (auto& s : open) {
    s->End().IgnoreError();
  }
  for (size_t i = 0; i + 1 < open.size(); ++i) EXPECT_TRUE(open[i]->Finish().ok());
  EXPECT_EQ(server_->metrics().failures(server::FailureReason::kTooManyStreams), 1);
}

}  // namespace
}  // namespace gmmscore::testing

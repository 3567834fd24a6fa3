// How streams end other than by End: client cancel mid-window, client deadline, idle timeout,
// maximum duration; a client that stops reading (bounded server memory, then it catches up);
// drain, in-process and on SIGTERM to a gmmscored subprocess, with in-flight windows delivered.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "model/random_model.h"
#include "proto/wire_codec.h"
#include "tests/server_test_util.h"

namespace gmmscore::testing {
namespace {

using namespace std::chrono_literals;

class ServerLifecycleTest : public ::testing::Test {
 protected:
  void Start(server::ServerConfig config) {
    server_ = StartServer(std::move(config));
    ASSERT_NE(server_, nullptr);
    channel_ = Connect(server_->port());
  }
  double Failures(server::FailureReason reason) { return server_->metrics().failures(reason); }
  double Buffered() { return server_->metrics().buffered_bytes.Value(); }
  double FramesReceived() { return server_->metrics().frames_received("mono").Value(); }
  double FramesScored() { return server_->metrics().frames_scored("mono").Value(); }
  // A channel whose receive window stays at gRPC's initial 64 KiB (no BDP probing), so that a
  // client that does not read fills it soon and the server's writes stop.
  std::shared_ptr<grpc::Channel> SmallWindowChannel() {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    return grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(server_->port()),
                                     grpc::InsecureChannelCredentials(), args);
  }

  // Opens a Score stream of 100-frame windows (22 KB a response) on `call`, sends 20 windows,
  // more than the client's 64 KiB window holds, waits until they are scored and a write waits
  // for a client that does not read, then sends a frame that is not the next one.
  void FailWithAWriteWaiting(grpc::ClientReaderWriter<v1::ScoreRequest, v1::ScoreResponse>* call,
                             const std::string& stream_id) {
    v1::ScoreRequest request;
    *request.mutable_config() = StreamConfigFor(stream_id, 100);
    ASSERT_TRUE(call->Write(request));
    request.Clear();
    const Matrix frames = RandomFeatures(100, 39, 0.0f, 5.0f, 1);
    wire::AppendFloat32(frames.data, request.mutable_features()->mutable_data());
    for (int64_t t = 0; t < kWaitingWindows * 100; t += 100) {
      request.mutable_features()->set_first_frame(t);
      ASSERT_TRUE(call->Write(request));
    }
    ASSERT_TRUE(WaitFor([&] { return FramesScored() == kWaitingWindows * 100; }));
    ASSERT_TRUE(WaitFor([&] { return server_->metrics().windows_sent.Value() > 0; }));
    std::this_thread::sleep_for(200ms);  // until a write waits for the client
    request.mutable_features()->set_first_frame(12345);
    ASSERT_TRUE(call->Write(request));
  }
  static constexpr int kWaitingWindows = 20;

  std::unique_ptr<server::GmmscoreServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  const Matrix& feats_ = MonoFeatures().at("cards-001");
};

TEST_F(ServerLifecycleTest, CancelMidWindowFreesTheSlotOnce) {
  server::ServerConfig config = LoopbackConfig();
  config.max_streams = 1;
  Start(config);
  v1::StreamConfig stream_config = StreamConfigFor("cancelled", 10);
  stream_config.set_max_latency_ms(5000);
  auto stream = client::ScoreStream::Open(channel_, stream_config, {});
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE((*stream)->Push(Rows(feats_, 0, 5)).ok());  // half a window, held by the server
  ASSERT_TRUE(WaitFor([&] { return FramesReceived() == 5; }));
  EXPECT_GT(Buffered(), 0);
  (*stream)->Cancel();
  EXPECT_EQ((*stream)->Finish().code(), absl::StatusCode::kCancelled);
  ASSERT_TRUE(WaitFor([&] { return server_->open_streams() == 0; }));
  EXPECT_EQ(server_->metrics().active_streams.Value(), 0);
  EXPECT_EQ(Failures(server::FailureReason::kCancelled), 1);
  ASSERT_TRUE(WaitFor([&] { return Buffered() == 0; }));
  // The only slot is free again, and freed once: exactly one stream fits.
  auto next = client::ScoreStream::Open(channel_, StreamConfigFor("next", 10), {});
  ASSERT_TRUE(next.ok());
  ASSERT_TRUE((*next)->Push(Rows(feats_, 0, 12)).ok());
  ASSERT_TRUE(WaitFor([&] { return server_->open_streams() == 1; }));
  auto third = StreamScores(channel_, StreamConfigFor("third", 10), Rows(feats_, 0, 3), 3);
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  ASSERT_TRUE((*next)->End().ok());
  EXPECT_TRUE((*next)->Finish().ok());
  EXPECT_EQ((*next)->NumFramesReady(), 12);
}

TEST_F(ServerLifecycleTest, ClientDeadlineEndsTheStream) {
  Start(LoopbackConfig());
  client::ScoreStream::Options options;
  options.deadline = 1s;  // room for the first window even under TSan
  v1::StreamConfig stream_config = StreamConfigFor("deadline", 10);
  stream_config.set_max_latency_ms(5000);
  auto stream = client::ScoreStream::Open(channel_, stream_config, options);
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE((*stream)->Push(Rows(feats_, 0, 15)).ok());
  EXPECT_EQ((*stream)->Finish().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ((*stream)->NumFramesReady(), 10);  // the full window came before the deadline
  ASSERT_TRUE(WaitFor([&] { return server_->open_streams() == 0; }));
}

TEST_F(ServerLifecycleTest, IdleStreamsEndWithDeadlineExceeded) {
  server::ServerConfig config = LoopbackConfig();
  // Room for a write to complete under TSan on a busy machine: one in flight this long is a
  // client that does not read, and is cancelled.
  config.stream.idle_timeout = absl::Seconds(1);
  Start(config);
  v1::StreamConfig stream_config = StreamConfigFor("idle", 10);
  stream_config.set_max_latency_ms(5000);
  auto stream = client::ScoreStream::Open(channel_, stream_config, {});
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE((*stream)->Push(Rows(feats_, 0, 13)).ok());
  const auto start = std::chrono::steady_clock::now();
  const absl::Status status = (*stream)->Finish();
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(status.message().find("stream 'idle': nothing read or written for 1s"),
            std::string::npos)
      << status;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ((*stream)->NumFramesReady(), 10);
  // A connection that never sends its config is idle too.
  auto stub = v1::Scorer::NewStub(channel_);
  grpc::ClientContext context;
  auto silent = stub->Score(&context);
  v1::ScoreResponse response;
  EXPECT_FALSE(silent->Read(&response));
  EXPECT_EQ(silent->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(Failures(server::FailureReason::kIdleTimeout), 2);
}

// Idle means the client's silence, not the server's: a window waiting in the batcher's queue
// (here for three seconds) holds the timeout back, and the stream times out once it was sent.
TEST_F(ServerLifecycleTest, IdleTimeoutWaitsForWindowsBeingScored) {
  server::ServerConfig config = LoopbackConfig();
  config.stream.idle_timeout = absl::Seconds(1);  // room for the write under TSan, as above
  config.batcher.max_queue_delay = absl::Seconds(3);
  Start(config);
  v1::StreamConfig stream_config = StreamConfigFor("waiting", 10);
  stream_config.set_max_latency_ms(10000);  // the 3 frames after the window stay unscored
  auto stream = client::ScoreStream::Open(channel_, stream_config, {});
  ASSERT_TRUE(stream.ok());
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE((*stream)->Push(Rows(feats_, 0, 13)).ok());
  const absl::Status status = (*stream)->Finish();
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_EQ((*stream)->NumFramesReady(), 10) << status;
  EXPECT_GE(std::chrono::steady_clock::now() - start, 3s);
}

// A stream that fails while a response is on its way waits for that write, so that the client
// reads its responses and then the error itself, not CANCELLED.
TEST_F(ServerLifecycleTest, AnErrorWaitsForTheWriteInFlight) {
  server::ServerConfig config = LoopbackConfig();
  config.stream.idle_timeout = absl::Seconds(20);
  config.stream.max_stream_windows = 64;  // every window is read, scored and waits to be sent
  Start(config);
  auto stub = v1::Scorer::NewStub(SmallWindowChannel());
  grpc::ClientContext context;
  auto call = stub->Score(&context);
  FailWithAWriteWaiting(call.get(), "erring");
  if (HasFatalFailure()) return;
  ASSERT_TRUE(WaitFor([&] { return Failures(server::FailureReason::kInvalidArgument) == 1; }));
  std::this_thread::sleep_for(200ms);  // the server does not give up on the write
  int responses = 0;
  v1::ScoreResponse response;
  while (call->Read(&response)) ++responses;
  const grpc::Status status = call->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << status.error_code() << " " << status.error_message();
  EXPECT_GE(responses, 1);
  EXPECT_LT(responses, kWaitingWindows);
}

// The same error with a client that never reads: the write in flight is cancelled after the
// idle timeout.
TEST_F(ServerLifecycleTest, AnErrorCancelsAWriteStuckForTheIdleTimeout) {
  server::ServerConfig config = LoopbackConfig();
  // Long enough that the bad message is read before the stuck write times the stream out.
  config.stream.idle_timeout = absl::Seconds(2);
  config.stream.max_stream_windows = 64;
  Start(config);
  auto stub = v1::Scorer::NewStub(SmallWindowChannel());
  grpc::ClientContext context;
  auto call = stub->Score(&context);
  FailWithAWriteWaiting(call.get(), "stuck-erring");
  if (HasFatalFailure()) return;
  ASSERT_TRUE(WaitFor([&] { return server_->open_streams() == 0; }, 10s));
  EXPECT_EQ(Failures(server::FailureReason::kInvalidArgument), 1);
  EXPECT_EQ(Failures(server::FailureReason::kIdleTimeout), 0);
  v1::ScoreResponse response;
  while (call->Read(&response)) {
  }
  EXPECT_EQ(call->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

// An idle stream whose client also stopped reading has a write that never completes: the
// server cancels it rather than wait for that write, and the slot comes back.
TEST_F(ServerLifecycleTest, IdleTimeoutCancelsAStreamStuckOnAWrite) {
  server::ServerConfig config = LoopbackConfig();
  config.stream.idle_timeout = absl::Milliseconds(500);
  config.stream.max_stream_windows = 2;
  Start(config);
  auto stub = v1::Scorer::NewStub(SmallWindowChannel());
  grpc::ClientContext context;
  auto stuck = stub->Score(&context);
  v1::ScoreRequest request;
  *request.mutable_config() = StreamConfigFor("stuck", 100);  // 22 KB per response
  ASSERT_TRUE(stuck->Write(request));
  request.Clear();
  const Matrix frames = RandomFeatures(100, 39, 0.0f, 5.0f, 1);
  wire::AppendFloat32(frames.data, request.mutable_features()->mutable_data());
  for (int64_t t = 0; t < 2000; t += 100) {  // fills the client's 64 KiB window, then waits
    request.mutable_features()->set_first_frame(t);
    if (!stuck->Write(request)) break;
  }
  ASSERT_TRUE(WaitFor([&] { return server_->open_streams() == 0; }, 10s));
  EXPECT_EQ(Failures(server::FailureReason::kIdleTimeout), 1);
  v1::ScoreResponse response;
  while (stuck->Read(&response)) {
  }
  // DEADLINE_EXCEEDED cannot pass the responses the client left unread: the proto documents
  // CANCELLED for this case.
  const grpc::Status status = stuck->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED)
      << status.error_code() << " " << status.error_message();
}

TEST_F(ServerLifecycleTest, MaxStreamDuration) {
  server::ServerConfig config = LoopbackConfig();
  config.stream.max_stream_duration = absl::Milliseconds(300);
  Start(config);
  auto stream = client::ScoreStream::Open(channel_, StreamConfigFor("long", 10), {});
  ASSERT_TRUE(stream.ok());
  absl::Status push;
  for (int32_t t = 0; t + 10 <= feats_.rows && push.ok(); t += 10) {
    push = (*stream)->Push(Rows(feats_, t, 10));
    std::this_thread::sleep_for(50ms);
  }
  const absl::Status status = (*stream)->Finish();
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(status.message().find("--max-stream-duration"), std::string::npos) << status;
  EXPECT_EQ(Failures(server::FailureReason::kMaxDuration), 1);
}

// A client that writes and never reads: the server stops reading it once --max-stream-windows
// windows are out, its memory for the stream stays under the documented bound, and the client's
// writes block. Once it reads, everything arrives.
TEST_F(ServerLifecycleTest, SlowReaderDoesNotGrowServerMemory) {
  server::ServerConfig config = LoopbackConfig();
  config.stream.max_stream_windows = 4;
  config.stream.max_frames_per_chunk = 100;
  Start(config);
  constexpr int32_t kWindow = 10, kChunk = 10, kFrames = 20000;
  const Matrix chunk = RandomFeatures(kChunk, 39, 0.0f, 5.0f, 3);
  auto stub = v1::Scorer::NewStub(SmallWindowChannel());
  grpc::ClientContext context;
  auto stream = stub->Score(&context);
  v1::ScoreRequest request;
  *request.mutable_config() = StreamConfigFor("slow", kWindow);
  ASSERT_TRUE(stream->Write(request));
  std::atomic<int64_t> written{0};
  std::thread writer([&] {
    v1::ScoreRequest r;
    wire::AppendFloat32(chunk.data, r.mutable_features()->mutable_data());
    for (int64_t t = 0; t < kFrames; t += kChunk) {
      r.mutable_features()->set_first_frame(t);
      if (!stream->Write(r)) return;
      written += kChunk;
    }
    r.Clear();
    r.mutable_end();
    stream->Write(r);
    stream->WritesDone();
  });
  // Wait until the writer stalls.
  int64_t last = -1;
  for (int i = 0; i < 50 && written.load() != last; ++i) {
    last = written.load();
    std::this_thread::sleep_for(500ms);
  }
  EXPECT_EQ(written.load(), last) << "the client's writes never blocked";
  // What the transports hold: the server's 256 KiB stream window (1680 frames of 156 bytes) and
  // the client's send buffer.
  EXPECT_LT(written.load(), 5000);
  // (100 + 10) frames x 39 x 4 bytes pending, plus 4 windows of features and responses.
  const double bound = (100 + kWindow) * 39 * 4 + 4 * (kWindow * 39 * 4 + kWindow * (56 * 4 + 16));
  EXPECT_LE(Buffered(), bound);
  EXPECT_GT(Buffered(), 0);
  const double received = FramesReceived();
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(FramesReceived(), received) << "the server kept reading a client that does not read";

  // The client catches up: every window arrives, in order.
  v1::ScoreResponse response;
  int64_t frames = 0;
  while (stream->Read(&response)) {
    ASSERT_EQ(response.first_frame(), frames);
    frames += response.num_frames();
  }
  writer.join();
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(frames, kFrames);
  EXPECT_EQ(Buffered(), 0);
}

TEST_F(ServerLifecycleTest, DrainSendsInFlightWindowsThenUnavailable) {
  Start(LoopbackConfig());
  v1::StreamConfig stream_config = StreamConfigFor("draining", 10);
  stream_config.set_max_latency_ms(10000);
  auto stream = client::ScoreStream::Open(channel_, stream_config, {});
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE((*stream)->Push(Rows(feats_, 0, 25)).ok());
  ASSERT_TRUE((*stream)->WaitForFrames(20));
  ASSERT_TRUE(WaitFor([&] { return FramesReceived() == 25; }));
  // Frames 20..24 wait for a window that will not fill; the drain sends them.
  bool clean = false;
  std::thread drain([&] { clean = server_->Drain(absl::Seconds(5)); });
  const absl::Status status = (*stream)->Finish();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("send the rest from frame 25"), std::string::npos) << status;
  EXPECT_EQ((*stream)->NumFramesReady(), 25);
  const Matrix offline = OfflineScores(MonoModelPath(), Rows(feats_, 0, 25));
  for (int32_t s = 0; s < offline.cols; ++s)
    EXPECT_EQ((*stream)->LogLikelihood(24, s), offline.at(24, s));
  drain.join();
  EXPECT_TRUE(clean);
}

TEST_F(ServerLifecycleTest, DrainRefusesNewStreamsAndCancelsStuckOnesAtTheDeadline) {
  server::ServerConfig config = LoopbackConfig();
  config.stream.max_stream_windows = 2;
  Start(config);
  // A stream blocked on a client that does not read.
  auto stub = v1::Scorer::NewStub(SmallWindowChannel());
  grpc::ClientContext context;
  auto stuck = stub->Score(&context);
  v1::ScoreRequest request;
  *request.mutable_config() = StreamConfigFor("stuck", 100);  // 22 KB per response
  ASSERT_TRUE(stuck->Write(request));
  std::thread writer([&] {
    v1::ScoreRequest r;
    const Matrix frames = RandomFeatures(100, 39, 0.0f, 5.0f, 1);
    wire::AppendFloat32(frames.data, r.mutable_features()->mutable_data());
    for (int64_t t = 0; t < 100000; t += 100) {
      r.mutable_features()->set_first_frame(t);
      if (!stuck->Write(r)) return;
    }
  });
  // Stuck once the client's 64 KiB window is full: the server then writes nothing more.
  double sent = -1;
  for (int i = 0; i < 50 && (sent <= 0 || server_->metrics().windows_sent.Value() != sent); ++i) {
    sent = server_->metrics().windows_sent.Value();
    std::this_thread::sleep_for(500ms);
  }
  ASSERT_GT(sent, 0);
  const auto start = std::chrono::steady_clock::now();
  bool clean = true;
  std::thread drain([&] { clean = server_->Drain(absl::Milliseconds(700)); });
  ASSERT_TRUE(WaitFor(
      [&] { return client::CheckHealth(channel_).code() == absl::StatusCode::kUnavailable; }));
  auto refused = StreamScores(channel_, StreamConfigFor("late", 10), Rows(feats_, 0, 5), 5);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable);
  drain.join();
  EXPECT_FALSE(clean);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  context.TryCancel();
  writer.join();
}

// The real daemon: SIGTERM while a stream has a partial window in flight.
TEST(ServerSigtermTest, DrainsInFlightWindowsAndExits) {
  int err_pipe[2];
  ASSERT_EQ(pipe(err_pipe), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(err_pipe[1], 2);
    close(err_pipe[0]);
    const std::string model = "--model=mono=" + MonoModelPath();
    execl(GMMSCORED, GMMSCORED, "--listen=127.0.0.1:0", "--plaintext", model.c_str(),
          "--drain-timeout=5s", "--max-latency=10s", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(err_pipe[1]);
  // stderr says the port, then "serving" once the model is loaded.
  FILE* err = fdopen(err_pipe[0], "r");
  int port = 0;
  bool serving = false;
  char line[512];
  while (!serving && std::fgets(line, sizeof line, err) != nullptr) {
    std::sscanf(line, "gmmscored: listening on port %d", &port);
    serving = std::string(line).find("gmmscored: serving") != std::string::npos;
  }
  ASSERT_TRUE(serving);
  ASSERT_GT(port, 0);
  auto channel = Connect(port);
  EXPECT_TRUE(client::CheckHealth(channel).ok());
  EXPECT_TRUE(client::CheckHealth(channel, "gmmscore.v1.Scorer/mono").ok());

  const Matrix& feats = MonoFeatures().at("cards-003");
  auto stream = client::ScoreStream::Open(channel, StreamConfigFor("sigterm", 10), {});
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE((*stream)->Push(Rows(feats, 0, 37)).ok());
  ASSERT_TRUE((*stream)->WaitForFrames(30));
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  const absl::Status status = (*stream)->Finish();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_EQ((*stream)->NumFramesReady(), 37);  // frames 30..36 were in flight

  int wstatus = 0;
  pid_t done = 0;
  for (int i = 0; i < 500 && done == 0; ++i) {
    done = waitpid(pid, &wstatus, WNOHANG);
    std::this_thread::sleep_for(10ms);
  }
  if (done == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &wstatus, 0);
    FAIL() << "gmmscored did not exit within 5 s of SIGTERM";
  }
  EXPECT_TRUE(WIFEXITED(wstatus));
  EXPECT_EQ(WEXITSTATUS(wstatus), 0);
  std::string rest;
  while (std::fgets(line, sizeof line, err) != nullptr) rest += line;
  fclose(err);
  EXPECT_NE(rest.find("drained, every stream finished"), std::string::npos) << rest;
}

}  // namespace
}  // namespace gmmscore::testing

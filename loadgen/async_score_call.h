// One Score call of the load generator on gRPC's asynchronous client API, shown to the stream as
// a reactor (as grpc::ClientBidiReactor would) but driven by completion queues and threads of our
// own (ClientQueues). gRPC 1.51's callback API runs all of a process's callbacks from one queue
// on cores/2 threads; at thousands of streams that queue, not the CPU, was what limited a process
// (docs/PERFORMANCE.md, "Score on our own completion queues").
#pragma once

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace gmmscore {

// The methods' full names, for a generic stub.
inline constexpr char kScoreMethod[] = "/gmmscore.v1.Scorer/Score";
inline constexpr char kScoreStreamsMethod[] = "/gmmscore.v1.Scorer/ScoreStreams";

// Completion queues, one thread each, that run the calls' reactions. Destroyed after every call
// on them is done.
class ClientQueues {
 public:
  explicit ClientQueues(int32_t queues);
  ~ClientQueues();  // shuts the queues down and joins the threads
  ClientQueues(const ClientQueues&) = delete;
  ClientQueues& operator=(const ClientQueues&) = delete;

  grpc::CompletionQueue* queue(size_t i) { return queues_[i % queues_.size()].get(); }

 private:
  std::vector<std::unique_ptr<grpc::CompletionQueue>> queues_;
  std::vector<std::thread> threads_;
};

// The stream's side. OnReadDone and OnWriteDone report the operation started last (ok false:
// the call is over); OnDone comes last, with the call's status, once nothing is pending.
class ScoreCallReactor {
 public:
  virtual void OnReadDone(bool ok) = 0;
  virtual void OnWriteDone(bool ok) = 0;
  virtual void OnDone(const grpc::Status& status) = 0;

 protected:
  ~ScoreCallReactor() = default;
};

// A Score stream as the load generator's stream sees it: a Score call of its own
// (AsyncScoreCall), or one stream of a ScoreStreams call (loadgen/score_streams_call.h). Messages
// go as serialized bytes: the reader may look at a response's header without parsing, or copying,
// its scores (loadgen/response_header.h).
class ScoreCall {
 public:
  virtual ~ScoreCall() = default;
  // StartCall first; then at most one read and one write (or WritesDone) in flight (a write
  // asked for before StartCall has completed waits for it). When a read fails (the server ended
  // the stream) the call gets its status and ends with OnDone.
  virtual void StartCall() = 0;
  virtual void StartRead(grpc::ByteBuffer* response) = 0;        // a serialized ScoreResponse
  virtual void StartWrite(const grpc::ByteBuffer* request) = 0;  // a serialized ScoreRequest
  virtual void StartWritesDone() = 0;
  virtual void TryCancel() = 0;
};

// One bidirectional call on a generic stub: a Score call, or the ScoreStreams call that carries
// many (then its messages are ScoreStreamsRequest / ScoreStreamsResponse).
class AsyncScoreCall final : public ScoreCall {
 public:
  AsyncScoreCall(grpc::GenericStub* stub, grpc::ClientContext* context, grpc::CompletionQueue* cq,
                 ScoreCallReactor* reactor, const char* method = kScoreMethod);
  AsyncScoreCall(const AsyncScoreCall&) = delete;
  AsyncScoreCall& operator=(const AsyncScoreCall&) = delete;

  void StartCall() override;
  void StartRead(grpc::ByteBuffer* response) override;
  void StartWrite(const grpc::ByteBuffer* request) override;
  void StartWritesDone() override;
  void TryCancel() override { context_->TryCancel(); }

  // Handed to the queue thread by Next.
  struct Event {
    AsyncScoreCall* call;
    enum class Op { kStart, kRead, kWrite, kWritesDone, kFinish } op;
    void Proceed(bool ok) { call->OnEvent(op, ok); }
  };

 private:
  void Started();  // counts an operation in
  void OnEvent(Event::Op op, bool ok);

  grpc::ClientContext* const context_;
  ScoreCallReactor* const reactor_;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> stream_;
  grpc::Status status_;
  Event start_{this, Event::Op::kStart}, read_{this, Event::Op::kRead},
      write_{this, Event::Op::kWrite}, writes_done_{this, Event::Op::kWritesDone},
      finish_{this, Event::Op::kFinish};

  std::mutex mu_;
  int pending_ = 0;       // operations started (or held) and not yet reported
  bool started_ = false;  // StartCall has completed
  const grpc::ByteBuffer* held_write_ = nullptr;  // a write asked for before that
  bool finished_ = false;
};

}  // namespace gmmscore

// One bidirectional-streaming call on gRPC's asynchronous API, shown to its handler as a reactor,
// as gRPC's callback API would (StartRead / StartWrite / Finish; OnReadDone / OnWriteDone /
// OnCancel / OnDone), but driven by completion queues and threads of our own (CallQueues).
//
// Why not the callback API: gRPC 1.51 runs every callback of a process from one completion queue
// on cores/2 threads, which also poll the sockets. At about 30,000 windows a second that queue,
// not the CPU, capped the daemon (docs/PERFORMANCE.md): two daemons on one machine served twice
// what one did. Here every call belongs to one of several queues, each drained by its own thread.
#pragma once

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/async_stream.h>

#include <functional>
#include <memory>
#include <mutex>

#include "server/rpc/bidi_call.h"

namespace gmmscore::server {

// What a completion-queue thread gets back from Next: every tag we hand gRPC is one of these.
class QueueEvent {
 public:
  virtual void Proceed(bool ok) = 0;

 protected:
  ~QueueEvent() = default;
};

class AsyncBidiCall final : public BidiCall {
 public:
  using Stream = grpc::ServerAsyncReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>;
  // Called once with the call and whether it arrived (false: the server shut down first).
  using Accepted = std::function<void(std::unique_ptr<AsyncBidiCall> call, bool ok)>;

  // A call object to request a new call with: pass context(), stream() and accept_tag() to the
  // service's RequestXxx. The caller gives up ownership until `accepted` hands it back.
  static AsyncBidiCall* ForRequest(Accepted accepted);
  AsyncBidiCall(const AsyncBidiCall&) = delete;
  AsyncBidiCall& operator=(const AsyncBidiCall&) = delete;

  grpc::ServerContext* context() { return &context_; }
  Stream* stream() { return &stream_; }
  void* accept_tag() { return &accept_; }

  // BidiCall; the reactions run on the call's queue's thread.
  void Bind(AsyncBidiReactor* reactor, std::function<void()> on_done) override;
  void StartRead(grpc::ByteBuffer* buffer) override;
  void StartWrite(const grpc::ByteBuffer* buffer) override;
  void Finish(const grpc::Status& status) override;
  void TryCancel() override { context_.TryCancel(); }

 private:
  enum class Op { kAccept, kRead, kWrite, kFinish, kDone };
  struct Event final : QueueEvent {
    Event(AsyncBidiCall* c, Op o) : call(c), op(o) {}
    void Proceed(bool ok) override { call->OnEvent(op, ok); }
    AsyncBidiCall* call;
    Op op;
  };

  explicit AsyncBidiCall(Accepted accepted);
  void CountStarted();  // an operation is about to start
  void OnEvent(Op op, bool ok);

  grpc::ServerContext context_;
  Stream stream_{&context_};
  Accepted accepted_;
  Event accept_{this, Op::kAccept}, read_{this, Op::kRead}, write_{this, Op::kWrite},
      finish_{this, Op::kFinish}, done_{this, Op::kDone};
  AsyncBidiReactor* reactor_ = nullptr;
  std::function<void()> on_done_;

  std::mutex mu_;
  int pending_ = 0;        // reads, writes and the Finish started and not yet reported
  bool finished_ = false;  // Finish has completed
  bool over_ = false;      // gRPC has reported the call done (finished or cancelled)
};

}  // namespace gmmscore::server

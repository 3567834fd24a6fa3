// What a Score stream's handler (StreamSession) sees of its call: a bidirectional stream with a
// reactor, as gRPC's callback API shows one (StartRead / StartWrite / Finish; OnReadDone /
// OnWriteDone / OnCancel / OnDone). Two transports implement it: a Score call of its own
// (async_bidi_call.h) and one stream of several on a ScoreStreams call (stream_mux.h).
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>

namespace gmmscore::server {

// The handler of one call. OnReadDone and OnWriteDone report the operation started last (ok:
// false once the call is over or, for a read, the client half-closed); OnCancel, if the call was
// cancelled (by the client, its deadline, a lost connection, the server's shutdown); OnDone comes
// last, once Finish has completed and no operation is pending: the call never touches the
// reactor again. The reactions of one call run one at a time.
class AsyncBidiReactor {
 public:
  virtual void OnReadDone(bool ok) = 0;
  virtual void OnWriteDone(bool ok) = 0;
  virtual void OnCancel() = 0;
  virtual void OnDone() = 0;

 protected:
  ~AsyncBidiReactor() = default;
};

class BidiCall {
 public:
  virtual ~BidiCall() = default;

  // The handler from now on; before the first operation. on_done runs after the reactor's
  // OnDone (the reactor may be gone by then; the call object too, if the reactor owned it).
  virtual void Bind(AsyncBidiReactor* reactor, std::function<void()> on_done) = 0;

  // At most one read and one write in flight; Finish once, with no write in flight (a read may
  // be: it completes with ok false). From any thread; a reaction may run before these return,
  // on another thread.
  virtual void StartRead(grpc::ByteBuffer* buffer) = 0;
  virtual void StartWrite(const grpc::ByteBuffer* buffer) = 0;
  virtual void Finish(const grpc::Status& status) = 0;
  virtual void TryCancel() = 0;
};

}  // namespace gmmscore::server

#include "server/rpc/async_bidi_call.h"

namespace gmmscore::server {

AsyncBidiCall* AsyncBidiCall::ForRequest(Accepted accepted) {
  return new AsyncBidiCall(std::move(accepted));
}

AsyncBidiCall::AsyncBidiCall(Accepted accepted) : accepted_(std::move(accepted)) {
  // Must precede the request; gRPC returns this tag only for a call that arrived.
  context_.AsyncNotifyWhenDone(&done_);
}

void AsyncBidiCall::Bind(AsyncBidiReactor* reactor, std::function<void()> on_done) {
  reactor_ = reactor;
  on_done_ = std::move(on_done);
}

void AsyncBidiCall::CountStarted() {
  std::lock_guard lock(mu_);
  ++pending_;
}

void AsyncBidiCall::StartRead(grpc::ByteBuffer* buffer) {
  CountStarted();
  stream_.Read(buffer, &read_);
}

void AsyncBidiCall::StartWrite(const grpc::ByteBuffer* buffer) {
  CountStarted();
  stream_.Write(*buffer, &write_);
}

void AsyncBidiCall::Finish(const grpc::Status& status) {
  CountStarted();
  stream_.Finish(status, &finish_);
}

void AsyncBidiCall::OnEvent(Op op, bool ok) {
  switch (op) {
    case Op::kAccept: {
      Accepted accepted = std::move(accepted_);
      accepted(std::unique_ptr<AsyncBidiCall>(this), ok);
      return;
    }
    case Op::kRead:
      reactor_->OnReadDone(ok);
      break;
    case Op::kWrite:
      reactor_->OnWriteDone(ok);
      break;
    case Op::kFinish:
      break;
    case Op::kDone:
      if (context_.IsCancelled()) reactor_->OnCancel();
      break;
  }
  // Counted down after the reaction, which may have started the next operation: the call is
  // over only when gRPC says so, Finish has completed and nothing is pending.
  bool last = false;
  {
    std::lock_guard lock(mu_);
    if (op == Op::kDone) {
      over_ = true;
    } else {
      --pending_;
      if (op == Op::kFinish) finished_ = true;
    }
    last = over_ && finished_ && pending_ == 0;
  }
  if (!last) return;
  // The reactor may own this call and let it go in OnDone: nothing of it is touched after.
  AsyncBidiReactor* reactor = reactor_;
  std::function<void()> on_done = std::move(on_done_);
  reactor->OnDone();
  if (on_done) on_done();
}

}  // namespace gmmscore::server

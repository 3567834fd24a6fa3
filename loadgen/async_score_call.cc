#include "loadgen/async_score_call.h"

#include <algorithm>
#include <utility>

namespace gmmscore {

ClientQueues::ClientQueues(int32_t queues) {
  for (int32_t i = 0; i < std::max(queues, 1); ++i) {
    queues_.push_back(std::make_unique<grpc::CompletionQueue>());
    threads_.emplace_back([queue = queues_.back().get()] {
      void* tag = nullptr;
      bool ok = false;
      while (queue->Next(&tag, &ok)) static_cast<AsyncScoreCall::Event*>(tag)->Proceed(ok);
    });
  }
}

ClientQueues::~ClientQueues() {
  for (const auto& q : queues_) q->Shutdown();
  for (std::thread& t : threads_) t.join();
}

AsyncScoreCall::AsyncScoreCall(grpc::GenericStub* stub, grpc::ClientContext* context,
                               grpc::CompletionQueue* cq, ScoreCallReactor* reactor,
                               const char* method)
    : context_(context), reactor_(reactor), stream_(stub->PrepareCall(context, method, cq)) {}

void AsyncScoreCall::Started() {
  std::lock_guard lock(mu_);
  ++pending_;
}

void AsyncScoreCall::StartCall() {
  Started();
  stream_->StartCall(&start_);
}

void AsyncScoreCall::StartRead(grpc::ByteBuffer* response) {
  Started();
  stream_->Read(response, &read_);
}

void AsyncScoreCall::StartWrite(const grpc::ByteBuffer* request) {
  {
    std::lock_guard lock(mu_);
    ++pending_;
    // StartCall's operation sends the initial metadata with the writes' operation set: a write
    // before it completes would be a second operation of that set.
    if (!started_) {
      held_write_ = request;
      return;
    }
  }
  stream_->Write(*request, &write_);
}

void AsyncScoreCall::StartWritesDone() {
  Started();
  stream_->WritesDone(&writes_done_);
}

void AsyncScoreCall::OnEvent(Event::Op op, bool ok) {
  switch (op) {
    case Event::Op::kStart: {
      const grpc::ByteBuffer* held = nullptr;
      {
        std::lock_guard lock(mu_);
        started_ = true;
        held = std::exchange(held_write_, nullptr);
      }
      if (held != nullptr) stream_->Write(*held, &write_);
      break;
    }
    case Event::Op::kWritesDone:
      break;
    case Event::Op::kRead:
      reactor_->OnReadDone(ok);
      // A failed read: the server has ended the stream (or the call broke); its status next.
      if (!ok) {
        Started();
        stream_->Finish(&status_, &finish_);
      }
      break;
    case Event::Op::kWrite:
      reactor_->OnWriteDone(ok);
      break;
    case Event::Op::kFinish:
      break;
  }
  bool last = false;
  {
    std::lock_guard lock(mu_);
    if (op == Event::Op::kFinish) finished_ = true;
    last = --pending_ == 0 && finished_;
  }
  // The reactor may free this call in OnDone: nothing of it is touched after.
  if (last) reactor_->OnDone(status_);
}

}  // namespace gmmscore

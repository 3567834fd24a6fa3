#include "server/rpc/call_queues.h"

#include "absl/strings/str_cat.h"
#include "util/thread_name.h"

namespace gmmscore::server {

CallQueues::CallQueues(grpc::ServerBuilder* builder, int32_t queues) {
  for (int32_t i = 0; i < queues; ++i) queues_.push_back(builder->AddCompletionQueue());
}

CallQueues::~CallQueues() { Shutdown(); }

void CallQueues::Run(std::vector<Method> methods) {
  methods_ = std::move(methods);
  for (const auto& cq : queues_) {
    for (const Method& method : methods_) RequestOn(cq.get(), &method);
  }
  for (const auto& cq : queues_) {
    threads_.emplace_back([queue = cq.get(), name = absl::StrCat("stream-cq-", threads_.size())] {
      NameThisThread(name);
      void* tag = nullptr;
      bool ok = false;
      while (queue->Next(&tag, &ok)) static_cast<QueueEvent*>(tag)->Proceed(ok);
    });
  }
}

void CallQueues::RequestOn(grpc::ServerCompletionQueue* cq, const Method* method) {
  AsyncBidiCall* call =
      AsyncBidiCall::ForRequest([this, cq, method](std::unique_ptr<AsyncBidiCall> c, bool ok) {
        Accepted(cq, method, std::move(c), ok);
      });
  {
    std::lock_guard lock(mu_);
    ++requests_;
  }
  method->request(call->context(), call->stream(), cq, call->accept_tag());
}

void CallQueues::Accepted(grpc::ServerCompletionQueue* cq, const Method* method,
                          std::unique_ptr<AsyncBidiCall> call, bool ok) {
  if (ok) {
    {
      std::lock_guard lock(mu_);
      ++calls_;
    }
    // The next request first: calls arriving together need not wait for this one's start.
    RequestOn(cq, method);
    method->start(std::move(call), [this] { CountOut(&calls_); });
  }
  // Not ok: the server is shutting down; the call never started and is freed here.
  CountOut(&requests_);
}

void CallQueues::CountOut(int64_t* counter) {
  std::lock_guard lock(mu_);
  if (--*counter == 0 && requests_ == 0 && calls_ == 0) idle_.notify_all();
}

void CallQueues::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  if (!threads_.empty()) {
    std::unique_lock lock(mu_);
    idle_.wait(lock, [this] { return requests_ == 0 && calls_ == 0; });
  }
  for (const auto& cq : queues_) cq->Shutdown();
  if (threads_.empty()) {
    // Never run: drain the queues here (gRPC requires it before they are destroyed).
    for (const auto& cq : queues_) {
      void* tag = nullptr;
      bool ok = false;
      while (cq->Next(&tag, &ok)) {
      }
    }
  }
  for (std::thread& t : threads_) t.join();
}

}  // namespace gmmscore::server

// The completion queues of the Score calls and their threads (see async_bidi_call.h): one thread
// per queue, each waiting for its queue's events (calls arriving, reads and writes done, calls
// over) and running their reactions; while waiting, the threads take turns polling the sockets.
// Each queue keeps a request for a new call of each method outstanding; a call stays on the queue
// it arrived on.
#pragma once

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "server/rpc/async_bidi_call.h"

namespace gmmscore::server {

class CallQueues {
 public:
  // Requests one new call on `cq` (context, stream, queue, tag), as the generated
  // RequestXxx(context, stream, cq, cq, tag) of the method does.
  using Request = std::function<void(grpc::ServerContext*, AsyncBidiCall::Stream*,
                                     grpc::ServerCompletionQueue*, void*)>;
  // Takes a call that arrived and binds a reactor to it. It must call Bind with on_done, which
  // counts the call out.
  using Start =
      std::function<void(std::unique_ptr<AsyncBidiCall> call, std::function<void()> on_done)>;

  // Adds `queues` completion queues to the builder: before BuildAndStart.
  CallQueues(grpc::ServerBuilder* builder, int32_t queues);
  ~CallQueues();  // Shutdown, if not done
  CallQueues(const CallQueues&) = delete;
  CallQueues& operator=(const CallQueues&) = delete;

  struct Method {
    Request request;
    Start start;
  };

  // After BuildAndStart: a request for each method outstanding on every queue, the threads
  // running.
  void Run(std::vector<Method> methods);
  // After the server's Shutdown (which cancels the calls still open and the requests): waits
  // for every call to be over and every request to come back, then shuts the queues down and
  // joins their threads.
  void Shutdown();

 private:
  void RequestOn(grpc::ServerCompletionQueue* cq, const Method* method);
  void Accepted(grpc::ServerCompletionQueue* cq, const Method* method,
                std::unique_ptr<AsyncBidiCall> call, bool ok);
  void CountOut(int64_t* counter);

  std::vector<std::unique_ptr<grpc::ServerCompletionQueue>> queues_;
  std::vector<std::thread> threads_;
  std::vector<Method> methods_;

  std::mutex mu_;
  std::condition_variable idle_;
  int64_t requests_ = 0;  // requests outstanding
  int64_t calls_ = 0;     // calls arrived and not yet over
  bool shut_down_ = false;
};

}  // namespace gmmscore::server

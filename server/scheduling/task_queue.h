// Threads that run posted tasks: with one thread, in order (ModelAdmin loads, which take seconds
// and must not hold a gRPC thread); with several, as they come (the batcher's deliveries of
// scored windows to their streams).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <vector>

namespace gmmscore::server {

class TaskQueue {
 public:
  // The threads are named name-0, name-1, ...
  explicit TaskQueue(int32_t threads = 1, const std::string& name = "tasks");
  ~TaskQueue();  // runs the tasks already queued, then joins
  TaskQueue(const TaskQueue&) = delete;
  TaskQueue& operator=(const TaskQueue&) = delete;

  void Post(std::function<void()> task);
  int32_t threads() const { return int32_t(threads_.size()); }

 private:
  void Run();

  std::mutex mu_;
  std::condition_variable wake_;
  std::queue<std::function<void()>> tasks_;
  bool stop_ = false;
  std::vector<std::thread> threads_;  // last: start after the members they use
};

}  // namespace gmmscore::server

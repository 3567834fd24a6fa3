// One thread that runs callbacks at given times: the streams' partial-window deadlines, idle
// timeouts and maximum durations. Callbacks must be short (they lock a session and decide);
// they never run on gRPC threads, and a callback scheduled for the past runs at once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

namespace gmmscore::server {

class TimerQueue {
 public:
  using Clock = std::chrono::steady_clock;

  TimerQueue();
  ~TimerQueue();  // drops callbacks not yet due
  TimerQueue(const TimerQueue&) = delete;
  TimerQueue& operator=(const TimerQueue&) = delete;

  void Schedule(Clock::time_point when, std::function<void()> callback);

 private:
  struct Timer {
    Clock::time_point when;
    uint64_t order;  // FIFO among equal times
    std::function<void()> callback;
    bool operator>(const Timer& other) const {
      return when != other.when ? when > other.when : order > other.order;
    }
  };
  void Run();

  std::mutex mu_;
  std::condition_variable wake_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  uint64_t next_order_ = 0;
  bool stop_ = false;
  std::thread thread_;  // last: starts after the members it uses
};

// Threads that run posted tasks: with one thread, in order (ModelAdmin loads, which take seconds
// and must not hold a gRPC thread); with several, as they come (the batcher's deliveries of
// scored windows to their streams).
class TaskQueue {
 public:
  explicit TaskQueue(int32_t threads = 1);
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

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

}  // namespace gmmscore::server

#include "server/scheduling/timer_queue.h"

#include "util/thread_name.h"

namespace gmmscore::server {

TimerQueue::TimerQueue()
    : thread_([this] {
        NameThisThread("timers");
        Run();
      }) {}

TimerQueue::~TimerQueue() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void TimerQueue::Schedule(Clock::time_point when, std::function<void()> callback) {
  {
    std::lock_guard lock(mu_);
    timers_.push(Timer{when, next_order_++, std::move(callback)});
  }
  wake_.notify_one();
}

void TimerQueue::Run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    if (timers_.empty()) {
      wake_.wait(lock);
      continue;
    }
    const Clock::time_point when = timers_.top().when;
    if (Clock::now() < when) {
      wake_.wait_until(lock, when);
      continue;
    }
    // Moving the callback out leaves the ordering keys intact, so the heap stays valid for pop.
    std::function<void()> callback = std::move(const_cast<Timer&>(timers_.top()).callback);
    timers_.pop();
    lock.unlock();
    callback();
    lock.lock();
  }
}

}  // namespace gmmscore::server

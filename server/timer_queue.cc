#include "server/timer_queue.h"

#include <algorithm>

namespace gmmscore::server {

TimerQueue::TimerQueue() : thread_([this] { Run(); }) {}

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

TaskQueue::TaskQueue(int32_t threads) {
  for (int32_t i = 0; i < std::max(threads, 1); ++i) threads_.emplace_back([this] { Run(); });
}

TaskQueue::~TaskQueue() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void TaskQueue::Post(std::function<void()> task) {
  {
    std::lock_guard lock(mu_);
    tasks_.push(std::move(task));
  }
  wake_.notify_one();
}

void TaskQueue::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    wake_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stopping, nothing left
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop();
    lock.unlock();
    task();
    lock.lock();
  }
}

}  // namespace gmmscore::server

#include "server/scheduling/task_queue.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "util/thread_name.h"

namespace gmmscore::server {

TaskQueue::TaskQueue(int32_t threads, const std::string& name) {
  for (int32_t i = 0; i < std::max(threads, 1); ++i) {
    threads_.emplace_back([this, thread = absl::StrCat(name, "-", i)] {
      NameThisThread(thread);
      Run();
    });
  }
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

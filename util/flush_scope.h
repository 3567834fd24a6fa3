// Writes put off to the end of a burst of work on one thread. A thread that produces many
// messages at once for a few destinations (the batch delivery: a batch's windows for streams that
// share a ScoreStreams call; a load generator's pacer: the chunks due this tick) opens a
// FlushScope; a destination that could send now asks to be flushed as the scope closes instead,
// and then sends everything queued for it in one message.
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

namespace gmmscore {

class Flushable {
 public:
  virtual void Flush() = 0;

 protected:
  ~Flushable() = default;
};

class FlushScope {
 public:
  // Scopes nest; the outermost one flushes.
  FlushScope() {
    if (active_ == nullptr) active_ = &pending_;
  }
  ~FlushScope() {
    if (active_ != &pending_) return;
    // A flush may defer again (more work for the same thread): keep going until none is left.
    while (!pending_.empty()) {
      std::vector<std::shared_ptr<Flushable>> now;
      now.swap(pending_);
      for (const auto& target : now) target->Flush();
    }
    active_ = nullptr;
  }
  FlushScope(const FlushScope&) = delete;
  FlushScope& operator=(const FlushScope&) = delete;

  // True when a scope is open on this thread: `target` is flushed (once, however often it was
  // deferred) as the scope closes. False: flush now.
  static bool Defer(std::shared_ptr<Flushable> target) {
    if (active_ == nullptr) return false;
    if (std::find(active_->begin(), active_->end(), target) == active_->end())
      active_->push_back(std::move(target));
    return true;
  }

 private:
  std::vector<std::shared_ptr<Flushable>> pending_;
  static inline thread_local std::vector<std::shared_ptr<Flushable>>* active_ = nullptr;
};

}  // namespace gmmscore

// Puts a stream's scored windows back in the order they were cut: batches in flight together, on
// several devices, finish in any order. Keyed by a window's first frame. Not thread-safe: the
// stream's session holds its lock around every call.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>

namespace gmmscore::server {

template <typename T>
class InOrder {
 public:
  // A window was cut and sent for scoring; windows are cut in increasing first frame.
  void Cut(int64_t first_frame) { cut_.push_back(first_frame); }
  // Whether the window is the next in cut order, which then goes out at once (and is no longer
  // waited for): its result need not be kept.
  bool TakeIfNext(int64_t first_frame) {
    if (cut_.empty() || cut_.front() != first_frame) return false;
    cut_.pop_front();
    return true;
  }
  // A window's result arrived (in any order).
  void Arrived(int64_t first_frame, T result) { arrived_.emplace(first_frame, std::move(result)); }
  // The next window in cut order, once its result has arrived.
  std::optional<std::pair<int64_t, T>> PopNext() {
    if (cut_.empty()) return std::nullopt;
    const auto it = arrived_.find(cut_.front());
    if (it == arrived_.end()) return std::nullopt;
    std::pair<int64_t, T> next(it->first, std::move(it->second));
    arrived_.erase(it);
    cut_.pop_front();
    return next;
  }
  // Results that arrived before an earlier window's.
  size_t waiting() const { return arrived_.size(); }
  void Clear() {
    cut_.clear();
    arrived_.clear();
  }

 private:
  std::deque<int64_t> cut_;       // first frames of windows cut, not yet popped
  std::map<int64_t, T> arrived_;  // results waiting for an earlier window's
};

}  // namespace gmmscore::server

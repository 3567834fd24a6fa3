#include "kernels/cuda/common/pinned_buffer_pool.h"

#include <cuda_runtime_api.h>

namespace gmmscore {

std::shared_ptr<PinnedBufferPool> PinnedBufferPool::Create(size_t bytes, int32_t limit) {
  return std::shared_ptr<PinnedBufferPool>(new PinnedBufferPool(bytes, limit));
}

PinnedBufferPool::~PinnedBufferPool() {
  for (void* buffer : free_) (void)cudaFreeHost(buffer);
}

std::shared_ptr<void> PinnedBufferPool::TryTake() {
  void* buffer = nullptr;
  {
    std::lock_guard lock(mu_);
    if (!free_.empty()) {
      buffer = free_.back();
      free_.pop_back();
    } else if (made_ < limit_) {
      ++made_;  // reserved before allocating, outside the lock
    } else {
      return nullptr;
    }
  }
  if (buffer == nullptr && cudaMallocHost(&buffer, bytes_) != cudaSuccess) {
    (void)cudaGetLastError();  // not left for a later launch's check to find
    std::lock_guard lock(mu_);
    --made_;
    return nullptr;
  }
  return std::shared_ptr<void>(buffer, [pool = shared_from_this()](void* b) { pool->GiveBack(b); });
}

void PinnedBufferPool::GiveBack(void* buffer) {
  std::lock_guard lock(mu_);
  free_.push_back(buffer);
}

}  // namespace gmmscore

// Pinned host buffers of one size that a workspace lends out with a batch's results
// (CudaWorkspace::LendEncoded16): the borrower keeps a buffer as long as it needs the bytes (the
// responses that send them, on their way to the clients) and the workspace goes on with another.
// At most `limit` buffers exist at once; while all are out nothing more is lent and the borrower
// copies instead, so clients that read slowly cost copies, never more pinned memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace gmmscore {

class PinnedBufferPool : public std::enable_shared_from_this<PinnedBufferPool> {
 public:
  static std::shared_ptr<PinnedBufferPool> Create(size_t bytes, int32_t limit);
  ~PinnedBufferPool();  // frees the buffers it holds; each one out holds the pool
  PinnedBufferPool(const PinnedBufferPool&) = delete;
  PinnedBufferPool& operator=(const PinnedBufferPool&) = delete;

  // A buffer of bytes() (> 0) bytes, given back to the pool when its last owner lets go: a free
  // one, else a new one while fewer than the limit exist. Null when all are out or the host
  // cannot pin another.
  std::shared_ptr<void> TryTake();

 private:
  PinnedBufferPool(size_t bytes, int32_t limit) : bytes_(bytes), limit_(limit) {}
  void GiveBack(void* buffer);

  const size_t bytes_;
  const int32_t limit_;
  std::mutex mu_;
  std::vector<void*> free_;
  int32_t made_ = 0;
};

}  // namespace gmmscore

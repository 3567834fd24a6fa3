// Owning, move-only handles of device memory and pinned (page-locked) host memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cuda/common/cuda_status.h"

namespace gmmscore {

template <typename T, bool kPinnedHost>
class CudaArray {
 public:
  CudaArray() = default;
  CudaArray(CudaArray&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  CudaArray& operator=(CudaArray&& other) noexcept {
    if (this != &other) {
      Release();
      ptr_ = std::exchange(other.ptr_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  CudaArray(const CudaArray&) = delete;
  CudaArray& operator=(const CudaArray&) = delete;
  ~CudaArray() { Release(); }

  static absl::StatusOr<CudaArray> Allocate(size_t size) {
    CudaArray array;
    void* ptr = nullptr;
    if (size > 0) {
      if constexpr (kPinnedHost) {
        GMM_CUDA_RETURN_IF_ERROR(cudaMallocHost(&ptr, size * sizeof(T)));
      } else {
        GMM_CUDA_RETURN_IF_ERROR(cudaMalloc(&ptr, size * sizeof(T)));
      }
    }
    array.ptr_ = static_cast<T*>(ptr);
    array.size_ = size;
    return array;
  }

  T* get() const { return ptr_; }
  size_t size() const { return size_; }
  size_t bytes() const { return size_ * sizeof(T); }

 private:
  void Release() {
    // Errors here can only repeat an earlier failure (a lost context); nothing is left to do.
    if (ptr_ == nullptr) return;
    if constexpr (kPinnedHost) {
      (void)cudaFreeHost(ptr_);
    } else {
      (void)cudaFree(ptr_);
    }
    ptr_ = nullptr;
  }

  T* ptr_ = nullptr;
  size_t size_ = 0;
};

template <typename T>
using DeviceArray = CudaArray<T, false>;
template <typename T>
using PinnedArray = CudaArray<T, true>;

// Allocates a device array holding a copy of host (synchronous; for data uploaded once).
template <typename T>
absl::StatusOr<DeviceArray<T>> UploadToDevice(const std::vector<T>& host) {
  GMM_ASSIGN_OR_RETURN(DeviceArray<T> array, DeviceArray<T>::Allocate(host.size()));
  if (!host.empty()) {
    GMM_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(array.get(), host.data(), array.bytes(), cudaMemcpyHostToDevice));
  }
  return array;
}

}  // namespace gmmscore

// Float buffers aligned for the widest SIMD loads the CPU kernels make (64 bytes: one AVX-512
// vector, one cache line).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

namespace gmmscore {

struct AlignedFree {
  void operator()(float* p) const { std::free(p); }
};
using AlignedFloats = std::unique_ptr<float[], AlignedFree>;

// `count` floats, uninitialised; throws std::bad_alloc where memory runs out.
inline AlignedFloats AllocateAlignedFloats(size_t count) {
  constexpr size_t kAlignment = 64;
  // aligned_alloc wants a multiple of the alignment, and at least one byte.
  const size_t bytes = (count * sizeof(float) + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, bytes == 0 ? kAlignment : bytes);
  if (p == nullptr) throw std::bad_alloc();
  return AlignedFloats(static_cast<float*>(p));
}

}  // namespace gmmscore

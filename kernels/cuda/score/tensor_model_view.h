// What the tensor-core kernel reads of a model (tensor_model_layout.h has the layout): plain
// device pointers, passed by value at launch. C++17, like simt_model_view.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gmmscore {

// States per group: the two 8-column tiles of one m16n8k8 product pair (frames x states).
inline constexpr int32_t kTensorGroupStates = 16;
// Lanes of a warp, each holding one float4 of a row's chunk (see tensor_model_layout.h).
inline constexpr int32_t kTensorLanes = 32;
// A warp keeps its frames' operands for every chunk in registers (8 per chunk); past 10 chunks
// (dimension 40) they no longer fit beside the accumulators without spills.
inline constexpr int32_t kTensorMaxChunks = 10;

// A row's float4 words: kTensorLanes a chunk for the high parts, as many for the low parts, then
// the row's kTensorGroupStates constants.
__host__ __device__ inline constexpr int32_t TensorRowWords(int32_t chunks) {
  return 2 * chunks * kTensorLanes + kTensorGroupStates / 4;
}

// The same row in the 3xF16 kernel's layout: per pair of chunks (the last one padded) and tile,
// kTensorLanes 16-byte words of half2 {u, v} values (the high parts of the two chunks, then their
// low parts), then the constants as float4 words.
__host__ __device__ inline constexpr int32_t TensorF16RowWords(int32_t chunks) {
  return 2 * ((chunks + 1) / 2) * kTensorLanes + kTensorGroupStates / 4;
}

// The 3xF16 split stores an operand a as hi = half(a) and lo = half((a - hi) * 2^11): the low
// part scaled up keeps its 11 bits clear of half precision's smallest exponents.
inline constexpr float kTensorF16LowScale = 2048.0f;

struct TensorModelView {
  const float4* rows = nullptr;     // [row][TensorRowWords(chunks)]
  const uint4* rows_f16 = nullptr;  // [row][TensorF16RowWords(chunks)]
  // [2][dim]: what the 3xF16 kernel multiplies x'_d (first dim) and x'_d^2 (then) by, 2^-s where
  // the layout scaled the column's parameters by 2^s.
  const float* column_scale = nullptr;
  const int32_t* group_first_row = nullptr;
  const int32_t* slot_state = nullptr;
  const float* shift = nullptr;
  int32_t dim = 0;
  int32_t chunks = 0;
  int32_t num_states = 0;
  int32_t num_groups = 0;
};

}  // namespace gmmscore

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

struct TensorModelView {
  const float4* rows = nullptr;  // [row][TensorRowWords(chunks)]
  const int32_t* group_first_row = nullptr;
  const int32_t* slot_state = nullptr;
  const float* shift = nullptr;
  int32_t dim = 0;
  int32_t chunks = 0;
  int32_t num_states = 0;
  int32_t num_groups = 0;
};

}  // namespace gmmscore

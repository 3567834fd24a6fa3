// What the SIMT kernel reads of a packed model (cuda_packed_model.h has the layout): plain device
// pointers, passed by value at launch. Kept apart from the host side so that the kernel's
// translation unit needs no more than C++17 (CMake 3.25 cannot ask nvcc for C++20).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gmmscore {

inline constexpr int32_t kGroupStates = 64;  // states per group (threads per frame slice)
inline constexpr int32_t kQuadGauss = 4;     // Gaussians a thread scores together: a "quad"
inline constexpr int32_t kQuadSlots = 2 * kQuadGauss;  // float4 words per quad and chunk: u, v
inline constexpr float kPadGconst = -1.0e30f;          // K of dummy Gaussians: exp2 of it is 0

struct SimtModelView {
  const float4* params = nullptr;
  const float* gconst = nullptr;
  const int32_t* group_first_quad = nullptr;
  const int32_t* slot_state = nullptr;
  const float* shift = nullptr;
  int32_t dim = 0;
  int32_t chunks = 0;
  int32_t num_states = 0;
  int32_t num_groups = 0;
};

}  // namespace gmmscore

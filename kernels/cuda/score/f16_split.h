// The host's half of the 3xF16 products (mma_f16.cuh is the device's; tensor_f16_kernel.h
// describes the split): the power-of-two column scales that bring parameters into half
// precision's range, and a scaled parameter pair split into its high and low half2 words.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>

#include "kernels/cuda/score/tensor_model_view.h"  // kTensorF16LowScale

namespace gmmscore {

// The power of two 2^s that brings a column's largest magnitude to [2^13, 2^14) (1 for a column
// of zeros), within float32's normal range.
inline float F16ColumnScale(float largest) {
  if (!(largest > 0.0f)) return 1.0f;
  return std::ldexp(1.0f, std::clamp(13 - std::ilogb(largest), -100, 100));
}

// A scaled parameter pair's high half2 (u in the low half) and low half2: hi = half(p), lo =
// half((p - hi) 2^11), each rounded to nearest even.
inline std::pair<uint32_t, uint32_t> SplitF16Pair(float u, float v) {
  const auto bits = [](float p) { return std::bit_cast<uint16_t>(static_cast<_Float16>(p)); };
  const auto value = [](uint16_t b) { return static_cast<float>(std::bit_cast<_Float16>(b)); };
  const uint16_t hi_u = bits(u), hi_v = bits(v);
  const uint16_t lo_u = bits((u - value(hi_u)) * kTensorF16LowScale);
  const uint16_t lo_v = bits((v - value(hi_v)) * kTensorF16LowScale);
  return {uint32_t(hi_u) | uint32_t(hi_v) << 16, uint32_t(lo_u) | uint32_t(lo_v) << 16};
}

}  // namespace gmmscore

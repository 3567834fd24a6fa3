// The host's half of the split-TF32 products (mma_tf32.cuh's SplitTf32 is the device's): a float
// rounded to TF32 as cvt.rna.tf32.f32 rounds it (to nearest, ties away from zero). The value
// minus its high part is exact in float32: the low part a layout stores beside the high part.
#pragma once

#include <bit>
#include <cstdint>

namespace gmmscore {

inline float Tf32HighPart(float p) {
  return std::bit_cast<float>((std::bit_cast<uint32_t>(p) + 0x1000u) & 0xffffe000u);
}

}  // namespace gmmscore

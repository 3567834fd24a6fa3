// The 16-bit score encodings of scorer.proto made on the device, where the scores are: per frame
// the best state (the first of the largest score) and that score, and the row as FLOAT16
// (binary16, round to nearest even) or RELATIVE16 (uint16 round((best - score) * 256), saturating
// at 65535), bit for bit what the host's encoder (proto/wire_codec.h) makes of the same floats.
// The daemon then sends 2 bytes a score without reading the float scores on the host, which was
// half of its CPU (docs/PERFORMANCE.md). C++17, like the kernels' other headers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"

namespace gmmscore {

// What to make of a frame's row (one byte per frame, as the kernel reads it).
enum class DeviceEncoding16 : uint8_t { kNone = 0, kFloat16 = 1, kRelative16 = 2 };

// For every frame t whose modes[t] is not kNone: best_state[t], best_score[t], and the row of
// scores ([frames][states]) encoded into encoded ([frames][states] 16-bit values). A row holding a
// NaN gets best_state -1 (the host encodes such rows itself: its rule for where a NaN is the best
// is std::max_element's). All pointers are device memory.
absl::Status LaunchEncode16(const float* scores, int32_t frames, int32_t states,
                            const DeviceEncoding16* modes, uint16_t* encoded, float* best_score,
                            int32_t* best_state, cudaStream_t stream);

}  // namespace gmmscore

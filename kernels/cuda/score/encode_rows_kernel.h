// scorer.proto's encodings of fused rows made on the device, where the scores are: per frame the
// best state (the first of the largest score) and that score, and then either the row as FLOAT16
// (binary16, round to nearest even) or RELATIVE16 (uint16 round((best - score) * 256), saturating
// at 65535), bit for bit what the host's encoder (proto/wire_codec.h) makes of the same floats; or,
// for BEAM_SPARSE, the states within the frame's beam of the best (score >= best - beam, in
// float), in state order, which the host then only orders best first and caps at max_states
// (server/rpc/response_encoder.h). The daemon then never reads a window's float scores on the
// host: that read and encoding were half of its CPU for the 16-bit encodings and most of it for
// BEAM_SPARSE (docs/PERFORMANCE.md). C++17, like the kernels' other headers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"

namespace gmmscore {

// What to make of a frame's row (one byte per frame, as the kernel reads it).
enum class DeviceRowEncoding : uint8_t {
  kNone = 0,
  kFloat16 = 1,
  kRelative16 = 2,
  kBeamSparse = 3
};

// Where the kBeamSparse frames' candidates go: memory the device writes (the CUDA workspace gives
// pinned host memory, so that only the candidates cross the bus, with no copy of their own).
struct DeviceBeamOutput {
  const float* beams = nullptr;  // [frames]: each kBeamSparse frame's beam, > 0 (device memory)
  int32_t capacity = 0;          // candidates a frame has room for
  float* scores = nullptr;       // [frames][capacity]
  int32_t* states = nullptr;     // [frames][capacity]
  // [frames]: the frame's candidates; -1 where more than capacity are within the beam or the row
  // holds a NaN (the host then selects from the float row).
  int32_t* counts = nullptr;
};

// For every frame t whose modes[t] is not kNone: best_state[t], best_score[t], and the row of
// scores ([frames][states]) encoded into encoded ([frames][states] 16-bit values) or, kBeamSparse,
// its candidates into *beam (which may be null when no frame asks for it). A row holding a NaN
// gets best_state -1 (the host encodes such rows itself: its rule for where a NaN is the best is
// std::max_element's). scores, modes, encoded, best_score and best_state are device memory.
absl::Status LaunchEncodeRows(const float* scores, int32_t frames, int32_t states,
                              const DeviceRowEncoding* modes, uint16_t* encoded, float* best_score,
                              int32_t* best_state, const DeviceBeamOutput* beam,
                              cudaStream_t stream);

}  // namespace gmmscore

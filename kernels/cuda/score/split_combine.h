// The second kernel of a split launch (kernel_config.h, kMaxSplits): log-adds the splits' partial
// log-sums of each (frame, slot) into the slot's state's score. C++17.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"

namespace gmmscore {

// partial (device): [splits][num_frames][num_slots] log-sums in log2 units, written by the splits;
// slot_state (device): the layout's slot -> state map, -1 for a dummy slot; out (device):
// [num_frames][num_states] scores in nats. Asynchronous on stream.
absl::Status CombineSplits(const float* partial, int32_t splits, int32_t num_frames,
                           int32_t num_slots, const int32_t* slot_state, int32_t num_states,
                           float* out, cudaStream_t stream);

}  // namespace gmmscore

// The batched forward-backward kernel behind CudaForwardBackward (cuda_forward_backward.h): one
// thread block per utterance runs all its frames in one launch, in the log domain with double
// sums. Forward: a thread per state sums its incoming emitting arcs from the previous layer, then
// the epsilon arcs of the layer in rounds (as many as the longest epsilon path; each round adds
// to the layer's emitting sum, so every epsilon path is counted once), and the layer is kept
// (float). Backward the same over outgoing arcs, from the final weights; on the way each emitting
// arc's posterior at each frame is written (float), for the host to sum by transition-id.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"

namespace gmmscore {

struct DeviceForwardBackwardBatch {
  int32_t utterances = 0;
  // Per utterance (as DeviceViterbiBatch).
  const int32_t* state_offset;
  const int32_t* num_states;
  const int32_t* start;
  const int32_t* num_frames;
  const int64_t* frame_offset;
  const int32_t* epsilon_depth;
  const int32_t* arc_offset;    // first global arc
  const int64_t* alpha_offset;  // (num_frames + 1) x num_states doubles from here
  const int64_t* gamma_offset;  // num_frames x (the utterance's arcs) floats from here
  // Per global state.
  const int32_t* in_begin;
  const int32_t* out_begin;
  const float* final_cost;
  // Per global arc (by destination), and the outgoing lists.
  const int32_t* arc_source;
  const int32_t* arc_dest;
  const int32_t* arc_pdf;
  const float* arc_weight;
  const int32_t* out_arc;
  const float* loglikes;  // rows of num_pdfs
  int32_t num_pdfs = 0;
  float acoustic_scale = 1.0f;
  // Scratch and outputs.
  double* scratch;  // 3 x global states
  double* alpha;
  float* gamma;  // per frame and arc of an utterance: the arc's posterior at the frame (0: epsilon)
  double* total;  // per utterance; -inf: no path
};

absl::Status LaunchForwardBackwardBatch(const DeviceForwardBackwardBatch& batch,
                                        cudaStream_t stream);

}  // namespace gmmscore

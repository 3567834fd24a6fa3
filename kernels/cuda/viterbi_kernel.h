// The batched exact Viterbi kernel behind CudaViterbi (cuda_viterbi.h): one thread block per
// utterance runs every frame of it in one launch. Graphs are stored by destination (each state's
// incoming arcs together), so a thread per state pulls its best predecessor: emitting arcs from
// the previous frame, then epsilon arcs of the same frame in rounds (as many as the longest
// epsilon path), each round reading one cost buffer and writing the other. A back-pointer (the
// winning arc) per frame and state; the traceback runs on the device.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"

namespace gmmscore {

// The batch in device memory. States and arcs of all utterances are numbered globally.
struct DeviceViterbiBatch {
  int32_t utterances = 0;
  // Per utterance.
  const int32_t* state_offset;  // first global state
  const int32_t* num_states;
  const int32_t* start;  // local start state
  const int32_t* num_frames;
  const int64_t* frame_offset;        // first row of loglikes, first entry of alignments
  const int32_t* epsilon_depth;       // longest epsilon path: rounds per frame
  const int64_t* backpointer_offset;  // (num_frames + 1) x num_states entries from here
  // Per global state: incoming arcs [in_begin[g], in_begin[g + 1]) (global arc indices), final
  // cost (+inf where not final).
  const int32_t* in_begin;
  const float* final_cost;
  // Per global arc.
  const int32_t* arc_source;  // local source state
  const int32_t* arc_pdf;     // -1: epsilon
  const int32_t* arc_tid;
  const float* arc_weight;
  const float* loglikes;  // rows of num_pdfs
  int32_t num_pdfs = 0;
  float acoustic_scale = 1.0f;
  // Scratch and outputs.
  double* costs;  // 2 x global states
  int32_t* backpointers;
  int32_t* alignments;    // per frame
  float* frame_loglikes;  // per frame: the log-likelihood of the frame's pdf on the best path
  float* scores;          // per utterance; +inf cost -> reached_final 0
  int32_t* reached_final;
};

absl::Status LaunchViterbiBatch(const DeviceViterbiBatch& batch, cudaStream_t stream);

}  // namespace gmmscore

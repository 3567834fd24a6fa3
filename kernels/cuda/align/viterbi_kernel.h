// The batched exact Viterbi kernels behind CudaViterbi (cuda_viterbi.h). All frames of an
// utterance run in one launch: one thread block per utterance aligns a batch of utterances, and
// an utterance of many states (more than a block can sweep quickly) has the whole GPU to itself,
// in a cooperative launch whose blocks meet at a grid-wide barrier between steps. Graphs are
// stored by destination (each state's incoming arcs together), so a thread per state pulls its
// best predecessor: emitting arcs from the previous frame, then epsilon arcs of the same frame in
// rounds (as many as the longest epsilon path), each round reading one cost buffer and writing
// the other. A back-pointer (the winning arc) per frame and state, held a segment of frames at a
// time: with segments shorter than the utterance, the costs at each segment's start are kept
// (checkpoints) and the traceback recomputes a segment's back-pointers from its checkpoint, in the
// same launch. The traceback runs on the device.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gmmscore {

// The batch in device memory. States and arcs of all utterances are numbered globally.
struct DeviceViterbiBatch {
  int32_t utterances = 0;
  // The utterances aligned a block each.
  const int32_t* block_utterances;
  int32_t num_block_utterances = 0;
  // Per utterance.
  const int32_t* state_offset;  // first global state
  const int32_t* num_states;
  const int32_t* start;  // local start state
  const int32_t* num_frames;
  const int64_t* frame_offset;        // first row of loglikes, first entry of alignments
  const int32_t* epsilon_depth;       // longest epsilon path: rounds per frame
  const int32_t* segment_frames;      // K >= 1: back-pointers held for K frames at a time
  const int64_t* backpointer_offset;  // (K + 1) x num_states entries from here
  const int64_t* checkpoint_offset;   // (ceil(num_frames / K) - 1) x num_states entries from here
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
  double* checkpoints;
  int32_t* alignments;    // per frame
  float* frame_loglikes;  // per frame: the log-likelihood of the frame's pdf on the best path
  float* scores;          // per utterance; +inf cost -> reached_final 0
  int32_t* reached_final;
  int32_t* traced;  // per utterance, scratch
  // Per block of a grid launch, scratch.
  double* block_best_cost;
  int32_t* block_best_state;
};

// The block utterances in one launch, then each of grid_utterances in a cooperative launch of
// grid_blocks blocks (at most MaxViterbiGridBlocks; the batch's block_best_* hold that many).
absl::Status LaunchViterbiBatch(const DeviceViterbiBatch& batch,
                                const std::vector<int32_t>& grid_utterances, int32_t grid_blocks,
                                cudaStream_t stream);

// The most blocks a cooperative launch may have on `device` (all resident at once); 0 where the
// device cannot launch cooperatively.
absl::StatusOr<int32_t> MaxViterbiGridBlocks(int device);

// Threads per block of both kernels.
int32_t ViterbiThreadsPerBlock();

}  // namespace gmmscore

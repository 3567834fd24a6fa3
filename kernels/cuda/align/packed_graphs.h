// A batch of alignment graphs packed for the GPU kernels that sweep them (viterbi_kernel.h,
// forward_backward_kernel.h), on the host: states and arcs of all utterances numbered globally,
// arcs stored by destination (each state's incoming arcs together, in the order of their sources
// and, per source, the graph's order), with each arc's local source and destination, its pdf (-1
// for epsilon), transition-id and weight; and, for kernels that also sweep backwards, each
// state's outgoing arcs as indices into that array.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/batch_viterbi.h"
#include "kernels/cuda/common/cuda_buffers.h"
#include "model/align_graph.h"
#include "model/transition_model.h"

namespace gmmscore {

struct PackedGraphs {
  // Per utterance.
  std::vector<int32_t> state_offset, num_states, start, num_frames, epsilon_depth;
  std::vector<int64_t> frame_offset;  // first frame of the utterance in the batch
  // Per global state: incoming arcs [in_begin[g], in_begin[g + 1]); final cost (+inf: not final).
  std::vector<int32_t> in_begin;
  std::vector<float> final_cost;
  // Per global arc, by destination.
  std::vector<int32_t> arc_source, arc_dest, arc_pdf, arc_tid;
  std::vector<float> arc_weight;
  // Per global state: outgoing arcs out_arc[out_begin[g] .. out_begin[g + 1]) (global arc indices).
  std::vector<int32_t> out_begin, out_arc;
  int64_t states = 0, frames = 0;
};

// InvalidArgument naming the utterance (by position) for a graph that does not fit the model, is
// empty or has an epsilon cycle.
absl::StatusOr<PackedGraphs> PackGraphs(std::span<const AlignGraph* const> graphs,
                                        std::span<const int32_t> frames,
                                        const TransitionModel& model);

// Utterances' host scores on the device, one after another, with their graphs and frame counts:
// what CudaViterbi::Align and CudaForwardBackward::Run pass on to their *OnDevice forms.
struct UploadedScores {
  std::vector<const AlignGraph*> graphs;
  std::vector<int32_t> frames;
  DeviceArray<float> scores;
};

// InvalidArgument naming the utterance whose scores are not for the model's pdfs;
// ResourceExhausted where `device` (the current device) has no room for them.
absl::StatusOr<UploadedScores> UploadScores(std::span<const ViterbiUtterance> utterances,
                                            const TransitionModel& model, int device);

}  // namespace gmmscore

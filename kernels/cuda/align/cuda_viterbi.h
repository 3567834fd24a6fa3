// BatchViterbi (kernels/batch_viterbi.h) on one GPU: a batch of utterances packed by destination
// state, aligned by one launch of the Viterbi kernel (viterbi_kernel.h), and one more for each
// utterance of a graph too large for a thread block, read back. AlignOnDevice
// takes scores already in device memory (CudaAligner scores there); Align uploads host scores.
// Back-pointers take 4 bytes per frame and graph state of every utterance of a batch. Where they
// do not all fit on the device (or in the memory budget), each utterance keeps them for segments
// of about sqrt(2 x frames) frames, with its costs at each segment's start (8 bytes a state), and
// the traceback recomputes each segment but the last: an hour of audio (360,000 frames) on a graph
// of 10,000 states takes 68 MB instead of 14 GB, for about twice the Viterbi time. The room is
// checked before anything is allocated.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/batch_viterbi.h"

namespace gmmscore {

class CudaViterbi final : public BatchViterbi {
 public:
  // Unavailable for no such device.
  static absl::StatusOr<std::unique_ptr<CudaViterbi>> Create(int device);

  absl::StatusOr<std::vector<ViterbiResult>> Align(std::span<const ViterbiUtterance> utterances,
                                                   const TransitionModel& model,
                                                   float acoustic_scale) override;

  // graphs[u] aligned to frames[u] rows of device_scores (rows of model.NumPdfs() natural-log
  // likelihoods; utterance u's rows follow utterance u - 1's), on `stream`, which is synchronised
  // before returning. InvalidArgument naming the utterance for a graph that does not fit the
  // model or has an epsilon cycle.
  absl::StatusOr<std::vector<ViterbiResult>> AlignOnDevice(
      std::span<const AlignGraph* const> graphs, std::span<const int32_t> frames,
      const float* device_scores, const TransitionModel& model, float acoustic_scale,
      cudaStream_t stream);

  // The most device memory an alignment may take for its graphs, costs and back-pointers (the
  // scores not included); 0 (the default): what the device has free.
  void set_memory_budget(int64_t bytes) { memory_budget_ = bytes; }

  // K > 0: back-pointers held for segments of K frames whatever the room (the results are the
  // same); 0 (the default): whole utterances where they fit.
  void set_segment_frames(int32_t frames) { segment_frames_ = frames; }

  // Utterances of at least this many graph states (default 8192, 32 per thread of a block) are
  // aligned by the whole GPU, one at a time; the rest a block each, all at once.
  void set_grid_states(int32_t states) { grid_states_ = states; }

  // Whether the last alignment held its back-pointers a segment at a time.
  bool checkpointed() const { return checkpointed_; }

 private:
  explicit CudaViterbi(int device) : device_(device) {}
  const int device_;
  int64_t memory_budget_ = 0;
  int32_t segment_frames_ = 0;
  int32_t grid_states_ = 8192;
  bool checkpointed_ = false;
};

}  // namespace gmmscore

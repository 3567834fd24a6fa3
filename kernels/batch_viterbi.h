// Viterbi alignment of many utterances at once on a device: each utterance a decoding graph
// (model/align_graph.h, transition costs already on its arcs) and its frames' log-likelihoods
// (frames x pdfs). Exact: no beam, every path is considered, so its alignment is the best path's;
// a beam-pruned aligner (align/faster_viterbi.h with a beam wide enough not to prune the best
// path) finds the same path unless two paths tie exactly. The CUDA implementation is
// kernels/cuda/align/cuda_viterbi.h; kernels/batch_aligner.h scores the frames first.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "model/align_graph.h"
#include "model/transition_model.h"
#include "util/matrix.h"

namespace gmmscore {

struct ViterbiUtterance {
  const AlignGraph* graph = nullptr;  // epsilon arcs allowed where they form no cycle
  const Matrix* loglikes = nullptr;   // frames x model.NumPdfs(), natural-log likelihoods
};

struct ViterbiResult {
  bool reached_final = false;           // some path of the utterance's length reached a final state
  std::vector<int32_t> transition_ids;  // one per frame, where reached_final
  float score = 0.0f;  // -(graph cost + acoustic_scale x acoustic cost) of the best path
  std::vector<float> frame_loglikes;  // per frame, the log-likelihood of its pdf on that path
};

class BatchViterbi {
 public:
  virtual ~BatchViterbi() = default;
  // InvalidArgument naming the utterance (by its position) for a graph with an epsilon cycle or
  // labels beyond the model; ResourceExhausted where the batch does not fit on the device.
  virtual absl::StatusOr<std::vector<ViterbiResult>> Align(
      std::span<const ViterbiUtterance> utterances, const TransitionModel& model,
      float acoustic_scale) = 0;
};

}  // namespace gmmscore

// Scoring and then alignment (Viterbi, or forward-backward posteriors) of many utterances at once
// against one model resident on a device, the scores never leaving it. The CUDA implementation is
// kernels/cuda/align/cuda_aligner.h; kernels/backend.h makes one where a GPU is chosen.
#pragma once

#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/batch_forward_backward.h"
#include "kernels/batch_viterbi.h"
#include "model/align_graph.h"
#include "util/matrix.h"

namespace gmmscore {

// An utterance to score and align: its graph (transition costs on its arcs; epsilon arcs allowed
// where they form no cycle) and its features, frames x dim.
struct AlignInput {
  const AlignGraph* graph = nullptr;
  const Matrix* feats = nullptr;
};

class BatchAligner {
 public:
  virtual ~BatchAligner() = default;
  // As BatchViterbi::Align, the frames scored first; InvalidArgument naming the utterance, frame
  // and dimension for features that are not the model's dimension or out of range.
  virtual absl::StatusOr<std::vector<ViterbiResult>> Align(std::span<const AlignInput> utterances,
                                                           float acoustic_scale) = 0;
  // As BatchForwardBackward::Run, the frames scored first; the same errors as Align.
  virtual absl::StatusOr<std::vector<PosteriorResult>> Posteriors(
      std::span<const AlignInput> utterances, float acoustic_scale) = 0;
};

}  // namespace gmmscore

// The forward-backward pass over many utterances at once on a device, in the log domain: each
// utterance's total log-likelihood over all paths of its length that end in a final state, and
// each frame's posteriors over the transition-ids on those paths (Kaldi's Posterior). The same
// semantics as the CPU reference align/forward_backward.h: exact, no beam. The CUDA
// implementation is kernels/cuda/align/cuda_forward_backward.h.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/batch_viterbi.h"
#include "model/transition_model.h"

namespace gmmscore {

struct PosteriorResult {
  bool reached_final = false;  // some path of the utterance's length reached a final state
  double total_log_likelihood = 0.0;
  // Per frame, (transition-id, posterior) in increasing transition-id order: those whose
  // posterior is above 0 in float.
  std::vector<std::vector<std::pair<int32_t, float>>> posteriors;
};

class BatchForwardBackward {
 public:
  virtual ~BatchForwardBackward() = default;
  // Graphs carry their transition costs; InvalidArgument naming the utterance for a graph that
  // does not fit the model or has an epsilon cycle; ResourceExhausted where the batch does not
  // fit on the device.
  virtual absl::StatusOr<std::vector<PosteriorResult>> Run(
      std::span<const ViterbiUtterance> utterances, const TransitionModel& model,
      float acoustic_scale) = 0;
};

}  // namespace gmmscore

// Aligning utterances in batches, whatever aligns them: a scorer and Kaldi's beam-pruned Viterbi
// on the CPU (align/beam_aligner.h), a device's exact batch aligner (align/device_aligner.h), or a
// gmmscored's Align RPC (tools/align_through_server.cc). `gmmscore align` and its --fmllr passes
// (tools/align_table.h) and train_mono's realignment (train/mono_training.h) align through this
// interface; the daemon's Align call, whose frames are scored by the batcher with the streams'
// windows, runs the same two aligners' steps (AlignUtterance, PrepareDeviceAlignGraph) on its
// scores.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "align/align_utterance.h"
#include "model/align_graph.h"
#include "util/matrix.h"

namespace gmmscore {

// An utterance to align: its compiled training graph, without transition costs (the aligner adds
// them with its options' scales), and its features (frames x the model's dimension, already
// checked by the caller: CheckFeatures, model/shape_checks.h).
struct UtteranceToAlign {
  std::string_view key;
  const AlignGraph* graph = nullptr;
  const Matrix* feats = nullptr;
};

// What one Align call should take at most; the caller cuts its utterances into batches (at least
// one utterance a batch, whatever its frames).
struct AlignerBatchLimits {
  int64_t utterances = 1;
  int64_t frames = 0;  // 0: no bound
};

class Aligner {
 public:
  virtual ~Aligner() = default;

  virtual AlignerBatchLimits batch_limits() const = 0;

  // Each utterance aligned as AlignUtterance aligns it (the options the aligner was made with),
  // in the batch's order. An utterance's own failure is its result's status (NotFound where no
  // path reached a final state; InvalidArgument for a graph that does not fit the model); the call
  // fails only where the batch as a whole cannot be aligned (a device or a connection that
  // fails). With posteriors, each aligned utterance's forward-backward posteriors over
  // transition-ids too (all paths of the readied graph, not the careful one); aligners that
  // cannot compute them fail with Unimplemented.
  virtual absl::StatusOr<std::vector<UtteranceAlignment>> Align(
      std::span<const UtteranceToAlign> batch, bool posteriors) = 0;
};

}  // namespace gmmscore

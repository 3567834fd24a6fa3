// The training loop of Kaldi's steps/train_mono.sh as one library call: from a model (or, with
// flat_start, from its HMM alone: one Gaussian per pdf at the features' global mean and variance,
// equal alignments first), iterations of accumulate, estimate (gmm-est's own call,
// train/kaldi_estimation.h, on the model in Kaldi's parameters: its first update with a minimum
// Gaussian occupancy of 3) and mix up towards totgauss, realigning to each
// utterance's compiled training graph on realign_iters. baum_welch_iters makes the first
// iterations soft: statistics from forward-backward posteriors over each utterance's whole graph
// (as HTK's HERest trains), so that a flat start does not commit to one equal alignment's choice
// of where the optional silences go.
//
// Frames are scored by whatever scorer the caller makes for each model (a CPU or GPU scorer, or
// anything behind the FusedScorer interface); alignment is Kaldi's beam-pruned Viterbi on the CPU
// (align/beam_aligner.h).
// The caller reads the data and writes the models: the sink hears of each model, each iteration's
// summary, and the warnings and log lines.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "align/align_utterance.h"
#include "kernels/fused_scorer.h"
#include "model/align_graph.h"
#include "model/gmm_model.h"
#include "model/kaldi_stored_model.h"
#include "train/mix_up.h"
#include "util/matrix.h"

namespace gmmscore {

struct MonoTrainingOptions {
  bool flat_start = false;
  int32_t num_iters = 40;
  int32_t max_iter_inc = 30;  // the last iteration that adds Gaussians
  int32_t totgauss = 1000;
  // train_mono.sh's power; min-count and perturb-factor are gmm-est's (MixUpOptions').
  MixUpOptions mix_up{.power = 0.25f};
  int32_t baum_welch_iters = 10;  // 0: train_mono.sh's Viterbi training throughout
  std::set<int32_t> realign_iters = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 12,
                                     14, 16, 18, 20, 23, 26, 29, 32, 35, 38};
  // Variances floored at this times the global variance of each iteration's statistics (0: the
  // absolute floor alone, as Kaldi).
  double var_floor_relative = 0.0;
  // train_mono.sh's beams and scales, not gmm-align-compiled's (AlignOptions').
  AlignOptions align{
      .beam = 6.0f, .retry_beam = 40.0f, .self_loop_scale = 0.1f, .acoustic_scale = 0.1f};
  int32_t srand = 0;  // with each key, the seed of the equal alignments' random paths

  // InvalidArgument for negative iteration counts or beams Kaldi refuses.
  absl::Status Validate() const;
};

struct TrainingUtterance {
  std::string key;
  Matrix feats;
  AlignGraph graph;                // compiled, without transition costs
  std::vector<int32_t> alignment;  // empty: not aligned (left out of the statistics)
};

struct TrainingIteration {
  int32_t iteration = 0;
  double avg_log_like = 0.0;  // per frame, of the statistics
  double frames = 0.0;
  int64_t utterances_used = 0;
  int64_t num_gauss = 0;  // of the model the statistics were gathered with
  double seconds = 0.0;
};

struct MonoTrainingSink {
  std::function<void(const std::string&)> log;
  std::function<void(const std::string&)> warn;
  std::function<void(const TrainingIteration&)> iteration_done;
  // Each model as it is made, in Kaldi's own parameters: "0" (the start), "1", ..., then "final".
  std::function<absl::Status(const std::string& name, const KaldiStoredModel&)> model_done;
};

using ScorerFactory =
    std::function<absl::StatusOr<std::unique_ptr<FusedScorer>>(const GmmModel& model)>;

// Trains from `start` on *utterances (features of the model's dimension, each with its graph);
// returns the final model, with each utterance's final alignment in *utterances (empty where it
// did not align). Errors: a dimension mismatch, no utterance to train on or to align, and what
// the scorer, the estimation or the sink report.
absl::StatusOr<KaldiStoredModel> TrainMono(const MonoTrainingOptions& options,
                                           KaldiStoredModel start,
                                           std::vector<TrainingUtterance>* utterances,
                                           const ScorerFactory& make_scorer,
                                           const MonoTrainingSink& sink);

}  // namespace gmmscore

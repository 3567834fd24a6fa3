#include "train/mono_training.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "align/beam_aligner.h"
#include "align/equal_align.h"
#include "align/forward_backward.h"
#include "align/transition_probs.h"
#include "train/accumulate.h"
#include "train/flat_start.h"
#include "train/kaldi_estimation.h"
#include "util/kaldi_random.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// One Gaussian per pdf at the features' global mean and variance (floored at 1e-6).
absl::StatusOr<GmmModel> FlatStart(const GmmModel& model,
                                   const std::vector<TrainingUtterance>& utts) {
  std::vector<double> sum(size_t(model.dim()), 0.0), sum_sq = sum;
  double frames = 0;
  for (const TrainingUtterance& u : utts) {
    for (int32_t t = 0; t < u.feats.rows; ++t) {
      for (int32_t d = 0; d < u.feats.cols; ++d) {
        sum[size_t(d)] += u.feats.at(t, d);
        sum_sq[size_t(d)] += double(u.feats.at(t, d)) * u.feats.at(t, d);
      }
    }
    frames += u.feats.rows;
  }
  for (size_t d = 0; d < sum.size(); ++d) {
    sum[d] /= frames;
    sum_sq[d] = std::max(sum_sq[d] / frames - sum[d] * sum[d], 1e-6);
  }
  return FlatStartModel(model.hmm(), sum, sum_sq);
}

// Equal alignments of a flat start; returns how many utterances aligned.
int64_t AlignEqually(int32_t srand, const MonoTrainingSink& sink,
                     std::vector<TrainingUtterance>& utts) {
  int64_t done = 0;
  for (TrainingUtterance& u : utts) {
    const uint32_t seed = KaldiKeySeed(u.key) + uint32_t(srand);
    auto ali = EqualAlign(u.graph, u.feats.rows, seed);
    if (!ali.ok()) {
      sink.warn(absl::StrCat("AlignEqual: did not align utterance ", u.key, ": ",
                             ali.status().message()));
      continue;
    }
    u.alignment = *std::move(ali);
    ++done;
  }
  return done;
}

// Realigns every utterance with model (those that fail are warned about and left out); returns
// how many aligned.
absl::StatusOr<int64_t> Realign(const AlignOptions& options, const GmmModel& model,
                                const ScorerFactory& make_scorer, const MonoTrainingSink& sink,
                                std::vector<TrainingUtterance>& utts) {
  GMM_ASSIGN_OR_RETURN(const std::unique_ptr<FusedScorer> scorer, make_scorer(model));
  BeamAligner aligner(options, model.hmm(), *scorer);
  int64_t done = 0;
  for (TrainingUtterance& u : utts) {
    u.alignment.clear();
    const UtteranceToAlign input{u.key, &u.graph, &u.feats};
    GMM_ASSIGN_OR_RETURN(std::vector<UtteranceAlignment> result, aligner.Align({&input, 1}, false));
    if (!result[0].status.ok()) {
      sink.warn(absl::StrCat("utterance ", u.key, ": ", result[0].status.message()));
      continue;
    }
    u.alignment = std::move(result[0].transition_ids);
    ++done;
  }
  return done;
}

// Forward-backward over every utterance's whole graph with model's transitions and the alignment
// scales: the transition-id posteriors' statistics go to *stats (utterances with no path of
// their length are warned about and left out). Returns how many utterances were added.
absl::StatusOr<int64_t> AccumulateForwardBackward(
    const AlignOptions& options, const GmmModel& model, const ScorerFactory& make_scorer,
    const MonoTrainingSink& sink, const std::vector<TrainingUtterance>& utts, ModelStats* stats) {
  GMM_ASSIGN_OR_RETURN(const std::unique_ptr<FusedScorer> scorer, make_scorer(model));
  const GmmAccumulator accumulator(model);
  int64_t done = 0;
  for (const TrainingUtterance& u : utts) {
    Matrix loglikes;
    GMM_RETURN_IF_ERROR(scorer->Score(u.feats, &loglikes));
    AlignGraph graph = u.graph;
    GMM_RETURN_IF_ERROR(
        AddTransitionProbs(model.hmm(), options.transition_scale, options.self_loop_scale, &graph));
    auto fb = ForwardBackward(graph, model.hmm(), loglikes, options.acoustic_scale);
    if (!fb.ok()) {
      sink.warn(absl::StrCat("utterance ", u.key, ": ", fb.status().message()));
      continue;
    }
    const TransitionPosterior posterior(std::make_move_iterator(fb->posteriors.begin()),
                                        std::make_move_iterator(fb->posteriors.end()));
    double weight = 0.0;
    auto like = accumulator.AccumulatePosteriors(u.feats, posterior, stats, &weight);
    if (!like.ok()) {
      sink.warn(absl::StrCat("utterance ", u.key, ": ", like.status().message()));
      continue;
    }
    ++done;
  }
  return done;
}

// The statistics of the utterances' alignments; returns how many utterances were added.
int64_t AccumulateAlignments(const GmmModel& model, const MonoTrainingSink& sink,
                             const std::vector<TrainingUtterance>& utts, ModelStats* stats) {
  const GmmAccumulator accumulator(model);
  int64_t done = 0;
  for (const TrainingUtterance& u : utts) {
    if (u.alignment.empty()) continue;
    auto like = accumulator.AccumulateAlignment(u.feats, u.alignment, stats);
    if (!like.ok()) {
      sink.warn(absl::StrCat("utterance ", u.key, ": ", like.status().message()));
      continue;
    }
    ++done;
  }
  return done;
}

// gmm-est on one iteration's statistics as their file carries them, with the call `est` makes
// (EstimateKaldiForm): the
// transitions, the GMMs (train_mono.sh's first update with a minimum occupancy of 3), then mixing
// up to target Gaussians with gmm-est's own draws, as train_mono.sh runs gmm-est afresh each
// iteration.
absl::Status Estimate(const MonoTrainingOptions& options, int32_t iteration, int64_t target,
                      const ModelStats& stats, KaldiStoredModel* model) {
  // gmm-est reads the statistics from gmm-acc-stats-ali's file, in float.
  ModelStats as_read = stats;
  as_read.gmm.RoundAsWritten();
  KaldiEstimationOptions est{.up = options.mix_up,
                             .var_floor_relative = options.var_floor_relative};
  if (iteration == 0) est.mle.min_gaussian_occupancy = 3;
  est.up.target = int32_t(target);
  return EstimateKaldiForm(est, as_read, model).status();
}

}  // namespace

absl::Status MonoTrainingOptions::Validate() const {
  if (baum_welch_iters < 0 || num_iters < 0) {
    return absl::InvalidArgumentError("--baum-welch-iters and --num-iters must not be negative");
  }
  return ValidateAlignOptions(align);
}

absl::StatusOr<KaldiStoredModel> TrainMono(const MonoTrainingOptions& options,
                                           KaldiStoredModel start,
                                           std::vector<TrainingUtterance>* utterances,
                                           const ScorerFactory& make_scorer,
                                           const MonoTrainingSink& sink) {
  GMM_RETURN_IF_ERROR(options.Validate());
  // The model as Kaldi stores it, which the estimation updates; and as the scorers and the
  // accumulation read it.
  KaldiStoredModel stored = std::move(start);
  GMM_ASSIGN_OR_RETURN(GmmModel model, StoredToGmmModel(stored, "the start model"));
  std::vector<TrainingUtterance>& utts = *utterances;
  for (const TrainingUtterance& u : utts) {
    if (u.feats.cols != model.dim()) {
      return absl::InvalidArgumentError(absl::StrCat("utterance ", u.key,
                                                     ": features of dimension ", u.feats.cols,
                                                     ", the model ", model.dim()));
    }
  }
  if (options.flat_start) {
    GMM_ASSIGN_OR_RETURN(const GmmModel flat, FlatStart(model, utts));
    GMM_ASSIGN_OR_RETURN(stored, GmmModelToStored(flat));
    GMM_ASSIGN_OR_RETURN(model, StoredToGmmModel(stored, "the flat start"));
  }
  // With baum_welch_iters the first iterations' posteriors come from the model: nothing to align
  // before them. Otherwise equal alignments (flat start) or the model's own.
  if (options.baum_welch_iters == 0 && options.flat_start) {
    const int64_t done = AlignEqually(options.srand, sink, utts);
    sink.log(absl::StrCat("Equal alignment: done ", done, " of ", utts.size(), " utterances."));
  } else if (options.baum_welch_iters == 0) {
    GMM_RETURN_IF_ERROR(Realign(options.align, model, make_scorer, sink, utts).status());
  }
  GMM_RETURN_IF_ERROR(sink.model_done("0", stored));

  // train_mono.sh's schedule: from one Gaussian per pdf, up by the same step an iteration to
  // totgauss at max_iter_inc.
  int64_t num_gauss = model.num_gauss();
  const int64_t inc =
      std::max<int64_t>(0, (options.totgauss - num_gauss) / std::max(1, options.max_iter_inc));
  for (int32_t x = 0; x < options.num_iters; ++x) {
    const auto begin = std::chrono::steady_clock::now();
    const bool soft = x < options.baum_welch_iters;
    // Realigned on realign_iters, and where the soft iterations end.
    if (!soft && x > 0 && (options.realign_iters.count(x) > 0 || x == options.baum_welch_iters)) {
      GMM_ASSIGN_OR_RETURN(const int64_t done,
                           Realign(options.align, model, make_scorer, sink, utts));
      if (done == 0) return absl::InvalidArgumentError("no utterance aligned");
    }
    ModelStats stats = ModelStats::ForModel(model, kGmmAll);
    int64_t used = 0;
    if (soft) {
      GMM_ASSIGN_OR_RETURN(
          used, AccumulateForwardBackward(options.align, model, make_scorer, sink, utts, &stats));
    } else {
      used = AccumulateAlignments(model, sink, utts, &stats);
    }
    if (used == 0) return absl::InvalidArgumentError("no utterance to train on");
    GMM_RETURN_IF_ERROR(Estimate(options, x, num_gauss, stats, &stored));
    sink.iteration_done(TrainingIteration{
        .iteration = x,
        .avg_log_like = stats.gmm.total_log_like / stats.gmm.total_frames,
        .frames = stats.gmm.total_frames,
        .utterances_used = used,
        .num_gauss = model.num_gauss(),
        .seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count()});
    GMM_ASSIGN_OR_RETURN(model,
                         StoredToGmmModel(stored, absl::StrCat("iteration ", x, "'s model")));
    GMM_RETURN_IF_ERROR(sink.model_done(std::to_string(x + 1), stored));
    if (x < options.max_iter_inc) num_gauss += inc;
  }
  GMM_RETURN_IF_ERROR(sink.model_done("final", stored));
  GMM_RETURN_IF_ERROR(Realign(options.align, model, make_scorer, sink, utts).status());
  return stored;
}

}  // namespace gmmscore

// gmmscore train: the whole training loop of Kaldi's steps/train_mono.sh in one command, for
// people without Kaldi's scripts: from a model (or, with --flat-start, from its HMM alone: one
// Gaussian per pdf at the global mean and variance, equal alignments first), iterations of
// accumulate (acc-stats), estimate (est) and mix up towards --totgauss, realigning to the compiled
// training graphs on --realign-iters. A progress line per iteration; the model written each
// iteration (DIR/N.mdl), DIR/final.mdl at the end, and DIR/final.ali the final model's
// alignments (text archive). --baum-welch-iters makes the first iterations soft: statistics from
// forward-backward posteriors over each utterance's whole graph (as HTK's HERest trains), so a flat
// start does not commit to one equal alignment's choice of where the optional silences go.
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "align/align_utterance.h"
#include "align/equal_align.h"
#include "align/forward_backward.h"
#include "align/transition_probs.h"
#include "formats/kaldi_fst.h"
#include "formats/kaldi_model.h"
#include "formats/kaldi_tables.h"
#include "formats/matrix_table.h"
#include "kernels/backend.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "train/accumulate.h"
#include "train/flat_start.h"
#include "train/mix_up.h"
#include "train/mle_update.h"
#include "train/transition_update.h"
#include "util/kaldi_random.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "gmmscore train";

void Log(const std::string& what) { KaldiLog(stderr, "LOG", kProgram, what); }
void Warn(const std::string& what) { KaldiLog(stderr, "WARNING", kProgram, what); }

struct Utterance {
  std::string key;
  Matrix feats;
  AlignGraph graph;
  std::vector<int32_t> alignment;  // empty: not aligned (it is left out of the statistics)
};

// Every utterance with both features and a graph; the others are warned about.
absl::StatusOr<std::vector<Utterance>> ReadUtterances(const std::string& graphs_rspec,
                                                      const std::string& feats_rspec) {
  std::map<std::string, Matrix> feats;
  {
    GMM_ASSIGN_OR_RETURN(auto reader, MatrixTableReader::Open(feats_rspec));
    std::string key;
    Matrix m;
    while (true) {
      GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&key, &m));
      if (!more) break;
      feats[key] = std::move(m);
    }
  }
  std::vector<Utterance> utterances;
  GMM_ASSIGN_OR_RETURN(auto graphs, FstTableReader::Open(graphs_rspec));
  std::string key;
  AlignGraph graph;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, graphs->Next(&key, &graph));
    if (!more) break;
    auto it = feats.find(key);
    if (it == feats.end()) {
      Warn("No features for utterance " + key);
      continue;
    }
    utterances.push_back({key, std::move(it->second), std::move(graph), {}});
    feats.erase(it);
  }
  for (const auto& [k, unused] : feats) Warn("No graph for utterance " + k);
  if (utterances.empty())
    return absl::InvalidArgumentError("no utterance has features and a graph");
  return utterances;
}

// Realigns every utterance with model (those that fail are warned about and left out); returns
// how many aligned.
absl::StatusOr<int64_t> Realign(const AlignOptions& options, const GmmModel& model,
                                const BackendRequest& request, std::vector<Utterance>* utts) {
  // Scored where --backend says (the first device), aligned on the CPU with Kaldi's beams.
  GMM_ASSIGN_OR_RETURN(auto scorers, MakeFusedScorers(request, {model}, FusionSpec()));
  int64_t done = 0;
  for (Utterance& u : *utts) {
    u.alignment.clear();
    Matrix loglikes;
    GMM_RETURN_IF_ERROR(scorers.front()->Score(u.feats, &loglikes));
    UtteranceAlignment result = AlignUtterance(options, model.hmm(), u.graph, loglikes);
    if (!result.status.ok()) {
      Warn("utterance " + u.key + ": " + std::string(result.status.message()));
      continue;
    }
    u.alignment = std::move(result.transition_ids);
    ++done;
  }
  return done;
}

// Forward-backward over every utterance's whole graph with model's transitions and the alignment
// scales: the transition-id posteriors' statistics go to *stats (utterances with no path of
// their length are warned about and left out). Returns how many utterances were added.
absl::StatusOr<int64_t> AccumulateForwardBackward(const AlignOptions& options,
                                                  const GmmModel& model,
                                                  const BackendRequest& request,
                                                  const std::vector<Utterance>& utts,
                                                  ModelStats* stats) {
  GMM_ASSIGN_OR_RETURN(auto scorers, MakeFusedScorers(request, {model}, FusionSpec()));
  const GmmAccumulator accumulator(model);
  int64_t done = 0;
  for (const Utterance& u : utts) {
    Matrix loglikes;
    GMM_RETURN_IF_ERROR(scorers.front()->Score(u.feats, &loglikes));
    AlignGraph graph = u.graph;
    GMM_RETURN_IF_ERROR(
        AddTransitionProbs(model.hmm(), options.transition_scale, options.self_loop_scale, &graph));
    auto fb = ForwardBackward(graph, model.hmm(), loglikes, options.acoustic_scale);
    if (!fb.ok()) {
      Warn("utterance " + u.key + ": " + std::string(fb.status().message()));
      continue;
    }
    const TransitionPosterior posterior(std::make_move_iterator(fb->posteriors.begin()),
                                        std::make_move_iterator(fb->posteriors.end()));
    double weight = 0.0;
    auto like = accumulator.AccumulatePosteriors(u.feats, posterior, stats, &weight);
    if (!like.ok()) {
      Warn("utterance " + u.key + ": " + std::string(like.status().message()));
      continue;
    }
    ++done;
  }
  return done;
}

absl::Status WriteAlignments(const std::vector<Utterance>& utts, const std::string& wspec) {
  GMM_ASSIGN_OR_RETURN(auto writer, Int32VectorTableWriter::Open(wspec));
  for (const Utterance& u : utts) {
    if (!u.alignment.empty()) GMM_RETURN_IF_ERROR(writer->Write(u.key, u.alignment));
  }
  return writer->Close();
}

absl::StatusOr<std::set<int32_t>> ParseIterations(const std::string& text) {
  std::set<int32_t> iters;
  for (absl::string_view word : absl::StrSplit(text, absl::ByAnyChar(" ,"), absl::SkipEmpty())) {
    int32_t x = 0;
    if (!absl::SimpleAtoi(word, &x)) {
      return absl::InvalidArgumentError("--realign-iters: '" + std::string(word) +
                                        "' is not an iteration number");
    }
    iters.insert(x);
  }
  return iters;
}

}  // namespace

int RunTrain(int argc, char** argv) {
  Args args("train",
            "[options] MODEL-IN GRAPHS-RSPEC FEATS-RSPEC DIR\n"
            "Trains a GMM-HMM as Kaldi's steps/train_mono.sh does: accumulate, estimate, mix up,\n"
            "realign to the compiled training graphs; the models go to DIR/N.mdl, DIR/final.mdl.\n"
            "e.g.: gmmscore train --flat-start 0.mdl ark:graphs.fsts ark:feats.ark exp/mono");
  bool flat_start = false;
  int32_t num_iters = 40, max_inc = 30, totgauss = 1000;
  // train_mono.sh's --power, not gmm-est's (MixUpOptions'); min-count and perturb-factor are
  // gmm-est's.
  MixUpOptions mix_up{.power = 0.25f};
  int32_t baum_welch_iters = 10;
  std::string realign_iters = "1 2 3 4 5 6 7 8 9 10 12 14 16 18 20 23 26 29 32 35 38";
  double rel_floor = 0.0;
  // train_mono.sh's beams and scales, not gmm-align-compiled's (AlignOptions').
  AlignOptions align_options{
      .beam = 6.0f, .retry_beam = 40.0f, .self_loop_scale = 0.1f, .acoustic_scale = 0.1f};
  // Scored on the CPU unless --backend says otherwise (BackendRequest's own default is auto).
  BackendRequest request{.backend = "cpu", .program = kProgram};
  int32_t srand = 0;
  bool binary = true;
  args.Register("flat-start", &flat_start,
                "take only MODEL-IN's HMM: one Gaussian per pdf at the features' global mean and "
                "variance, the topology's transition probabilities, equal alignments to begin")
      .Register("num-iters", &num_iters, "number of iterations of training")
      .Register("max-iter-inc", &max_inc, "last iteration to increase the number of Gaussians on")
      .Register("totgauss", &totgauss, "target number of Gaussians")
      .Register("power", &mix_up.power,
                "exponent of the occupancies that allocate Gaussians to pdfs")
      .Register("baum-welch-iters", &baum_welch_iters,
                "the first N iterations take forward-backward posteriors over each utterance's "
                "whole graph instead of one alignment (with --flat-start, instead of equal "
                "alignments too); 0 for train_mono.sh's Viterbi training throughout")
      .Register("realign-iters", &realign_iters,
                "iterations to realign on, after the --baum-welch-iters")
      .Register("var-floor-relative", &rel_floor,
                "floor variances at this times the global variance of each iteration's statistics "
                "(0: --min-variance alone, as Kaldi)")
      .Register("beam", &align_options.beam, "alignment beam")
      .Register("retry-beam", &align_options.retry_beam, "alignment beam for the second try")
      .Register("transition-scale", &align_options.transition_scale, "transition-probability scale")
      .Register("acoustic-scale", &align_options.acoustic_scale, "acoustic scale")
      .Register("self-loop-scale", &align_options.self_loop_scale, "self-loop scale")
      .Register("backend", &request.backend,
                "cpu, cuda or auto: where frames are scored for alignment")
      .Register("devices", &request.devices, "GPUs for --backend cuda or auto")
      .Register("threads", &request.cpu_threads, "CPU threads for scoring, 0 for all")
      .Register("srand", &srand,
                "seed of the equal alignments' random paths (with the utterance key)")
      .Register("binary", &binary, "write models in binary");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 4) return Usage(args);
  auto realign = ParseIterations(realign_iters);
  if (!realign.ok()) return Fail("train", realign.status());
  if (baum_welch_iters < 0 || num_iters < 0) {
    return Fail("train", absl::InvalidArgumentError(
                             "--baum-welch-iters and --num-iters must not be negative"));
  }
  if (absl::Status s = ValidateAlignOptions(align_options); !s.ok()) return Fail("train", s);
  const std::string dir = pos[3];

  auto start = ReadKaldiModelFile(pos[0]);
  if (!start.ok()) return Fail("train", start.status());
  auto utts = ReadUtterances(pos[1], pos[2]);
  if (!utts.ok()) return Fail("train", utts.status());
  for (const Utterance& u : *utts) {
    if (u.feats.cols != start->dim()) {
      return Fail("train",
                  absl::InvalidArgumentError("utterance " + u.key + ": features of dimension " +
                                             KaldiNumber(u.feats.cols) + ", the model " +
                                             KaldiNumber(start->dim())));
    }
  }

  GmmModel model = *std::move(start);
  if (flat_start) {
    std::vector<double> sum(size_t(model.dim()), 0.0), sum_sq = sum;
    double frames = 0;
    for (const Utterance& u : *utts) {
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
    auto flat = FlatStartModel(model.hmm(), sum, sum_sq);
    if (!flat.ok()) return Fail("train", flat.status());
    model = *std::move(flat);
  }
  // With --baum-welch-iters the first iterations' posteriors come from the model: nothing to
  // align before them. Otherwise equal alignments (flat start) or the model's own.
  if (baum_welch_iters == 0 && flat_start) {
    int64_t done = 0;
    for (Utterance& u : *utts) {
      const uint32_t seed = KaldiKeySeed(u.key) + uint32_t(srand);
      auto ali = EqualAlign(u.graph, u.feats.rows, seed);
      if (!ali.ok()) {
        Warn("AlignEqual: did not align utterance " + u.key + ": " +
             std::string(ali.status().message()));
        continue;
      }
      u.alignment = *std::move(ali);
      ++done;
    }
    Log("Equal alignment: done " + KaldiNumber(done) + " of " + KaldiNumber(utts->size()) +
        " utterances.");
  } else if (baum_welch_iters == 0) {
    auto done = Realign(align_options, model, request, &*utts);
    if (!done.ok()) return Fail("train", done.status());
  }
  if (absl::Status s = WriteKaldiModelFile(model, dir + "/0.mdl", binary); !s.ok()) {
    return Fail("train", s);
  }

  // train_mono.sh's schedule: from one Gaussian per pdf, up by incgauss an iteration to
  // --totgauss at --max-iter-inc.
  int64_t num_gauss = model.num_gauss();
  const int64_t inc = std::max<int64_t>(0, (totgauss - num_gauss) / std::max(1, max_inc));
  for (int32_t x = 0; x < num_iters; ++x) {
    const auto begin = std::chrono::steady_clock::now();
    const bool soft = x < baum_welch_iters;
    // Realigned on --realign-iters, and where the soft iterations end.
    if (!soft && x > 0 && (realign->count(x) > 0 || x == baum_welch_iters)) {
      auto done = Realign(align_options, model, request, &*utts);
      if (!done.ok()) return Fail("train", done.status());
      if (*done == 0) return Fail("train", absl::InvalidArgumentError("no utterance aligned"));
    }
    ModelStats stats = ModelStats::ForModel(model, kGmmAll);
    const GmmAccumulator accumulator(model);
    int64_t aligned = 0;
    if (soft) {
      auto done = AccumulateForwardBackward(align_options, model, request, *utts, &stats);
      if (!done.ok()) return Fail("train", done.status());
      aligned = *done;
    } else {
      for (const Utterance& u : *utts) {
        if (u.alignment.empty()) continue;
        auto like = accumulator.AccumulateAlignment(u.feats, u.alignment, &stats);
        if (!like.ok()) {
          Warn("utterance " + u.key + ": " + std::string(like.status().message()));
          continue;
        }
        ++aligned;
      }
    }
    if (aligned == 0) return Fail("train", absl::InvalidArgumentError("no utterance to train on"));
    auto hmm =
        MleUpdateTransitions(TransitionUpdateOptions{}, stats.transitions, model.hmm(), nullptr);
    if (!hmm.ok()) return Fail("train", hmm.status());
    MleOptions mle;
    if (x == 0) mle.min_gaussian_occupancy = 3;  // train_mono.sh's first update
    if (rel_floor > 0.0) {
      auto floor = RelativeVarianceFloor(stats.gmm, rel_floor);
      if (!floor.ok()) return Fail("train", floor.status());
      for (double& f : *floor) f = std::max(f, mle.min_variance);
      mle.variance_floor = *std::move(floor);
    }
    auto updated = MleUpdate(mle, stats.gmm, kGmmAll, model, nullptr);
    if (!updated.ok()) return Fail("train", updated.status());
    GmmModelSpec spec = updated->spec();
    spec.hmm = *std::move(hmm);
    auto next = GmmModel::Create(std::move(spec));
    if (!next.ok()) return Fail("train", next.status());
    std::vector<float> occs(size_t(stats.gmm.num_pdfs()));
    for (int32_t pdf = 0; pdf < stats.gmm.num_pdfs(); ++pdf) {
      occs[size_t(pdf)] = static_cast<float>(stats.gmm.PdfOccupancy(pdf));
    }
    MixUpOptions mix = mix_up;
    mix.target = int32_t(num_gauss);
    // A new generator an iteration: train_mono.sh runs gmm-est afresh each time.
    KaldiRandom random;
    next = MixUp(*next, occs, mix, [&] { return double{random.Gauss()}; });
    if (!next.ok()) return Fail("train", next.status());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    std::fprintf(stderr,
                 "%s: iteration %d: avg log-likelihood per frame %.4f over %.0f frames (%lld of "
                 "%zu utterances aligned), %lld Gaussians, %.3f s (%.3g frames/s)\n",
                 kProgram, x, stats.gmm.total_log_like / stats.gmm.total_frames,
                 stats.gmm.total_frames, static_cast<long long>(aligned), utts->size(),
                 static_cast<long long>(model.num_gauss()), seconds,
                 stats.gmm.total_frames / seconds);
    model = *std::move(next);
    if (absl::Status s =
            WriteKaldiModelFile(model, dir + "/" + std::to_string(x + 1) + ".mdl", binary);
        !s.ok()) {
      return Fail("train", s);
    }
    if (x < max_inc) num_gauss += inc;
  }
  if (absl::Status s = WriteKaldiModelFile(model, dir + "/final.mdl", binary); !s.ok()) {
    return Fail("train", s);
  }
  auto done = Realign(align_options, model, request, &*utts);
  if (!done.ok()) return Fail("train", done.status());
  if (absl::Status s = WriteAlignments(*utts, "ark,t:" + dir + "/final.ali"); !s.ok()) {
    return Fail("train", s);
  }
  Log("Wrote " + dir + "/final.mdl and the alignments of " + KaldiNumber(*done) +
      " utterances to " + dir + "/final.ali");
  return 0;
}

}  // namespace gmmscore

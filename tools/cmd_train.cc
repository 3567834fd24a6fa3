// gmmscore train: the training loop of Kaldi's steps/train_mono.sh in one command, for people
// without Kaldi's scripts (train/mono_training.h): reads the graphs and features, trains, writes
// each iteration's model (DIR/N.mdl), DIR/final.mdl and DIR/final.ali, the final model's
// alignments (text archive), with a progress line per iteration.
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "formats/kaldi_fst.h"
#include "formats/kaldi_model_copy.h"
#include "formats/kaldi_tables.h"
#include "formats/matrix_table.h"
#include "kernels/backend.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "train/mono_training.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "gmmscore train";

void Log(const std::string& what) { KaldiLog(stderr, "LOG", kProgram, what); }
void Warn(const std::string& what) { KaldiLog(stderr, "WARNING", kProgram, what); }

// Every utterance with both features and a graph; the others are warned about.
absl::StatusOr<std::vector<TrainingUtterance>> ReadUtterances(const std::string& graphs_rspec,
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
  std::vector<TrainingUtterance> utterances;
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

absl::Status WriteAlignments(const std::vector<TrainingUtterance>& utts, const std::string& wspec) {
  GMM_ASSIGN_OR_RETURN(auto writer, Int32VectorTableWriter::Open(wspec));
  for (const TrainingUtterance& u : utts) {
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
  MonoTrainingOptions options;
  std::string realign_iters = absl::StrJoin(options.realign_iters, " ");
  // Scored on the CPU unless --backend says otherwise (BackendRequest's own default is auto).
  BackendRequest request{.backend = "cpu", .program = kProgram};
  bool binary = true;
  args.Register("flat-start", &options.flat_start,
                "take only MODEL-IN's HMM: one Gaussian per pdf at the features' global mean and "
                "variance, the topology's transition probabilities, equal alignments to begin")
      .Register("num-iters", &options.num_iters, "number of iterations of training")
      .Register("max-iter-inc", &options.max_iter_inc,
                "last iteration to increase the number of Gaussians on")
      .Register("totgauss", &options.totgauss, "target number of Gaussians")
      .Register("power", &options.mix_up.power,
                "exponent of the occupancies that allocate Gaussians to pdfs")
      .Register("baum-welch-iters", &options.baum_welch_iters,
                "the first N iterations take forward-backward posteriors over each utterance's "
                "whole graph instead of one alignment (with --flat-start, instead of equal "
                "alignments too); 0 for train_mono.sh's Viterbi training throughout")
      .Register("realign-iters", &realign_iters,
                "iterations to realign on, after the --baum-welch-iters")
      .Register("var-floor-relative", &options.var_floor_relative,
                "floor variances at this times the global variance of each iteration's statistics "
                "(0: --min-variance alone, as Kaldi)")
      .Register("beam", &options.align.beam, "alignment beam")
      .Register("retry-beam", &options.align.retry_beam, "alignment beam for the second try")
      .Register("transition-scale", &options.align.transition_scale, "transition-probability scale")
      .Register("acoustic-scale", &options.align.acoustic_scale, "acoustic scale")
      .Register("self-loop-scale", &options.align.self_loop_scale, "self-loop scale")
      .Register("backend", &request.backend,
                "cpu, cuda or auto: where frames are scored for alignment")
      .Register("devices", &request.devices, "GPUs for --backend cuda or auto")
      .Register("threads", &request.cpu_threads, "CPU threads for scoring, 0 for all")
      .Register("srand", &options.srand,
                "seed of the equal alignments' random paths (with the utterance key)")
      .Register("binary", &binary, "write models in binary");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 4) return Usage(args);
  auto realign = ParseIterations(realign_iters);
  if (!realign.ok()) return Fail("train", realign.status());
  options.realign_iters = *std::move(realign);
  if (absl::Status s = options.Validate(); !s.ok()) return Fail("train", s);
  const std::string dir = pos[3];

  auto start = ReadKaldiStoredModel(pos[0], /*transitions=*/true, /*gmms=*/true);
  if (!start.ok()) return Fail("train", start.status());
  auto utts = ReadUtterances(pos[1], pos[2]);
  if (!utts.ok()) return Fail("train", utts.status());

  // Scored where --backend says (the first device), aligned on the CPU with Kaldi's beams.
  const ScorerFactory make_scorer =
      [&](const GmmModel& model) -> absl::StatusOr<std::unique_ptr<FusedScorer>> {
    GMM_ASSIGN_OR_RETURN(auto scorers, MakeFusedScorers(request, {model}, FusionSpec()));
    return std::move(scorers.front());
  };
  const MonoTrainingSink sink{
      .log = Log,
      .warn = Warn,
      .iteration_done =
          [&](const TrainingIteration& it) {
            std::fprintf(stderr,
                         "%s: iteration %d: avg log-likelihood per frame %.4f over %.0f frames "
                         "(%lld of %zu utterances aligned), %lld Gaussians, %.3f s (%.3g "
                         "frames/s)\n",
                         kProgram, it.iteration, it.avg_log_like, it.frames,
                         static_cast<long long>(it.utterances_used), utts->size(),
                         static_cast<long long>(it.num_gauss), it.seconds, it.frames / it.seconds);
          },
      .model_done =
          [&](const std::string& name, const KaldiStoredModel& model) {
            return WriteKaldiStoredModel(model, dir + "/" + name + ".mdl", binary);
          }};
  auto trained = TrainMono(options, *std::move(start), &*utts, make_scorer, sink);
  if (!trained.ok()) return Fail("train", trained.status());
  if (absl::Status s = WriteAlignments(*utts, "ark,t:" + dir + "/final.ali"); !s.ok()) {
    return Fail("train", s);
  }
  int64_t aligned = 0;
  for (const TrainingUtterance& u : *utts) aligned += u.alignment.empty() ? 0 : 1;
  Log("Wrote " + dir + "/final.mdl and the alignments of " + KaldiNumber(aligned) +
      " utterances to " + dir + "/final.ali");
  return 0;
}

}  // namespace gmmscore

// gmmscore acc-stats: Kaldi's gmm-acc-stats-ali (and, with --posteriors, gmm-acc-stats): the
// statistics of a model's GMMs and transitions from features and alignments or posteriors,
// written as Kaldi's accumulator file (formats/kaldi_accs.h), same arguments, defaults, log lines
// and exit status (0 when at least one utterance was accumulated).
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "formats/kaldi_accs.h"
#include "formats/kaldi_model.h"
#include "formats/kaldi_tables.h"
#include "formats/matrix_table.h"
#include "formats/table_by_key.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "train/accumulate.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "gmmscore acc-stats";

void Log(const std::string& what) { KaldiLog(stderr, "LOG", kProgram, what); }
void Warn(const std::string& what) { KaldiLog(stderr, "WARNING", kProgram, what); }

// Each utterance's alignment, or with posteriors its posteriors over transition-ids.
struct Targets {
  std::map<std::string, std::vector<int32_t>> alignments;
  std::map<std::string, TransitionPosterior> posteriors;
  bool use_posteriors = false;
};

// What one utterance added: its log-likelihood and its frames' weight.
struct Added {
  double like = 0.0;
  double frames = 0.0;
};

// Adds an utterance's statistics to *stats; where it has no alignment or posteriors that fit, or
// cannot be accumulated, an error whose message is the warning Kaldi's tools give.
absl::StatusOr<Added> AccumulateUtterance(const GmmAccumulator& accumulator, const Targets& targets,
                                          const std::string& key, const Matrix& feats,
                                          ModelStats* stats) {
  Added added;
  absl::StatusOr<double> like;
  if (targets.use_posteriors) {
    const auto it = targets.posteriors.find(key);
    if (it == targets.posteriors.end()) {
      return absl::NotFoundError("Could not find posteriors for utterance " + key);
    }
    if (it->second.size() != size_t(feats.rows)) {
      return absl::InvalidArgumentError("Posterior vector has wrong size " +
                                        KaldiNumber(it->second.size()) + " vs. " +
                                        KaldiNumber(feats.rows) + " (utterance " + key + ")");
    }
    like = accumulator.AccumulatePosteriors(feats, it->second, stats, &added.frames);
  } else {
    const auto it = targets.alignments.find(key);
    if (it == targets.alignments.end()) {
      return absl::NotFoundError("No alignment for utterance " + key);
    }
    if (it->second.size() != size_t(feats.rows)) {
      return absl::InvalidArgumentError("Alignments has wrong size " +
                                        KaldiNumber(it->second.size()) + " vs. " +
                                        KaldiNumber(feats.rows) + " (utterance " + key + ")");
    }
    added.frames = double(feats.rows);
    like = accumulator.AccumulateAlignment(feats, it->second, stats);
  }
  if (!like.ok()) {
    return absl::Status(like.status().code(),
                        "utterance " + key + ": " + std::string(like.status().message()));
  }
  added.like = *like;
  return added;
}

}  // namespace

int RunAccStats(int argc, char** argv) {
  Args args("acc-stats",
            "[options] MODEL FEATS-RSPEC ALIGNMENTS-RSPEC ACCS-WXFILENAME\n"
            "Accumulates statistics for GMM training from alignments (Kaldi's gmm-acc-stats-ali),\n"
            "or with --posteriors from posteriors over transition-ids (Kaldi's gmm-acc-stats).\n"
            "e.g.: gmmscore acc-stats 1.mdl scp:train.scp ark:1.ali 1.acc");
  bool binary = true, use_posteriors = false;
  std::string update_flags = "mvwt";
  args.Register("binary", &binary, "write output in binary mode")
      .Register("posteriors", &use_posteriors,
                "the third argument is a table of posteriors (gmm-acc-stats), not alignments")
      .Register("update-flags", &update_flags,
                "which GMM parameters will be updated: a subset of mvwt (statistics are kept for "
                "them)");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 4) return Usage(args);
  auto flags = ParseGmmFlags(update_flags);
  if (!flags.ok()) return Fail("acc-stats", flags.status());
  auto model = ReadKaldiModelFile(pos[0]);
  if (!model.ok()) return Fail("acc-stats", model.status());

  Targets targets{.use_posteriors = use_posteriors};
  if (use_posteriors) {
    auto read = ReadTableByKey<PosteriorTableReader, TransitionPosterior>(pos[2]);
    if (!read.ok()) return Fail("acc-stats", read.status());
    targets.posteriors = *std::move(read);
  } else {
    auto read = ReadTableByKey<Int32VectorTableReader, std::vector<int32_t>>(pos[2]);
    if (!read.ok()) return Fail("acc-stats", read.status());
    targets.alignments = *std::move(read);
  }
  auto features = MatrixTableReader::Open(pos[1]);
  if (!features.ok()) return Fail("acc-stats", features.status());

  // gmm-acc-stats-ali keeps every statistic; gmm-acc-stats those of --update-flags.
  ModelStats stats = ModelStats::ForModel(*model, use_posteriors ? *flags : uint16_t{kGmmAll});
  const GmmAccumulator accumulator(*model);
  double total_like = 0.0, total_frames = 0.0;
  int64_t done = 0, errors = 0;
  std::string key;
  Matrix feats;
  while (true) {
    auto more = (*features)->Next(&key, &feats);
    if (!more.ok()) return Fail("acc-stats", more.status());
    if (!*more) break;
    auto added = AccumulateUtterance(accumulator, targets, key, feats, &stats);
    if (!added.ok()) {
      Warn(std::string(added.status().message()));
      ++errors;
      continue;
    }
    ++done;
    total_like += added->like;
    total_frames += added->frames;
    if (done % 50 == 0) {
      Log("Processed " + KaldiNumber(done) + " utterances; for utterance " + key +
          " avg. like is " + KaldiNumber(added->like / added->frames) + " over " +
          KaldiNumber(added->frames) + " frames.");
    }
  }
  Log("Done " + KaldiNumber(done) + " files, " + KaldiNumber(errors) + " with errors.");
  Log("Overall avg like per frame (Gaussian only) = " + KaldiNumber(total_like / total_frames) +
      " over " + KaldiNumber(total_frames) + " frames.");
  if (absl::Status s = WriteModelStatsFile(stats, pos[3], binary); !s.ok()) {
    return Fail("acc-stats", s);
  }
  Log("Written accs.");
  return done != 0 ? 0 : 1;
}

}  // namespace gmmscore

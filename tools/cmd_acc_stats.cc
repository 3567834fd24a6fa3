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

  std::map<std::string, std::vector<int32_t>> alignments;
  std::map<std::string, TransitionPosterior> posteriors;
  if (use_posteriors) {
    auto read = ReadTableByKey<PosteriorTableReader, TransitionPosterior>(pos[2]);
    if (!read.ok()) return Fail("acc-stats", read.status());
    posteriors = *std::move(read);
  } else {
    auto read = ReadTableByKey<Int32VectorTableReader, std::vector<int32_t>>(pos[2]);
    if (!read.ok()) return Fail("acc-stats", read.status());
    alignments = *std::move(read);
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
    absl::StatusOr<double> like;
    double frames = 0.0;
    if (use_posteriors) {
      const auto it = posteriors.find(key);
      if (it == posteriors.end()) {
        Warn("Could not find posteriors for utterance " + key);
        ++errors;
        continue;
      }
      if (it->second.size() != size_t(feats.rows)) {
        Warn("Posterior vector has wrong size " + KaldiNumber(it->second.size()) + " vs. " +
             KaldiNumber(feats.rows) + " (utterance " + key + ")");
        ++errors;
        continue;
      }
      like = accumulator.AccumulatePosteriors(feats, it->second, &stats, &frames);
    } else {
      const auto it = alignments.find(key);
      if (it == alignments.end()) {
        Warn("No alignment for utterance " + key);
        ++errors;
        continue;
      }
      if (it->second.size() != size_t(feats.rows)) {
        Warn("Alignments has wrong size " + KaldiNumber(it->second.size()) + " vs. " +
             KaldiNumber(feats.rows) + " (utterance " + key + ")");
        ++errors;
        continue;
      }
      frames = double(feats.rows);
      like = accumulator.AccumulateAlignment(feats, it->second, &stats);
    }
    if (!like.ok()) {
      Warn("utterance " + key + ": " + std::string(like.status().message()));
      ++errors;
      continue;
    }
    ++done;
    total_like += *like;
    total_frames += frames;
    if (done % 50 == 0) {
      Log("Processed " + KaldiNumber(done) + " utterances; for utterance " + key +
          " avg. like is " + KaldiNumber(*like / frames) + " over " + KaldiNumber(frames) +
          " frames.");
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

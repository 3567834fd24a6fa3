// Kaldi's gmm-est-fmllr (run under that name): an fMLLR transform per speaker (--spk2utt) or per
// utterance from features and posteriors over transition-ids (train/fmllr.h), with gmm-est-fmllr's
// options, warnings, log lines and exit status.
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "align/posteriors.h"
#include "formats/kaldi_model_copy.h"
#include "formats/kaldi_tables.h"
#include "formats/matrix_lookup.h"
#include "formats/matrix_table.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "train/fmllr.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "gmm-est-fmllr";

void Log(const std::string& what) { KaldiLog(stderr, "LOG", kProgram, what); }
void Warn(const std::string& what) { KaldiLog(stderr, "WARNING", kProgram, what); }

struct Totals {
  double improvement = 0.0, frames = 0.0;
  int64_t done = 0, no_posteriors = 0, other_errors = 0;
};

absl::StatusOr<std::map<std::string, Posterior>> ReadPosteriors(const std::string& rspecifier) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<PosteriorTableReader> reader,
                       PosteriorTableReader::Open(rspecifier));
  std::map<std::string, Posterior> out;
  std::string key;
  Posterior posterior;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&key, &posterior));
    if (!more) return out;
    out[key] = std::move(posterior);
  }
}

// Checks the posterior's transition-ids, then accumulates the utterance; false (with a warning
// counted) where its size does not fit the features.
absl::StatusOr<bool> Accumulate(const KaldiStoredModel& model, const std::string& utt,
                                const Matrix& feats, const Posterior& posterior, FmllrStats* stats,
                                Totals* totals) {
  if (posterior.size() != size_t(feats.rows)) {
    Warn(absl::StrCat("Posterior vector has wrong size ", posterior.size(), " vs. ", feats.rows));
    ++totals->other_errors;
    return false;
  }
  for (size_t t = 0; t < posterior.size(); ++t) {
    for (const auto& [tid, weight] : posterior[t]) {
      if (tid < 1 || tid > model.hmm->NumTransitionIds()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "utterance ", utt, ", frame ", t, ": transition-id ", tid, " is not in the model"));
      }
    }
  }
  absl::Status s =
      AccumulateFmllrForUtterance(model, feats, PosteriorToPdfs(*model.hmm, posterior), stats);
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat("utterance ", utt, ": ", s.message()));
  ++totals->done;
  return true;
}

absl::Status Estimate(const FmllrOptions& options, const std::string& key, const char* what,
                      FmllrStats& stats, MatrixTableWriter& writer, Totals* totals) {
  const FmllrEstimate estimate = EstimateFmllr(options, stats);
  for (const std::string& line : estimate.log_lines) Log(line);
  for (const std::string& warning : estimate.warnings) Warn(warning);
  GMM_RETURN_IF_ERROR(writer.Write(key, estimate.transform));
  Log(absl::StrCat("For ", what, " ", key, ", auxf-impr from fMLLR is ",
                   KaldiNumber(static_cast<float>(estimate.objective_change / estimate.count)),
                   ", over ", KaldiNumber(static_cast<float>(estimate.count)), " frames."));
  totals->improvement += static_cast<float>(estimate.objective_change);
  totals->frames += static_cast<float>(estimate.count);
  return absl::OkStatus();
}

absl::Status Run(const FmllrOptions& options, const std::string& spk2utt,
                 const std::vector<std::string>& pos, Totals* totals) {
  GMM_ASSIGN_OR_RETURN(const KaldiStoredModel model, ReadKaldiStoredModel(pos[0], true, true));
  GMM_ASSIGN_OR_RETURN(const auto posteriors, ReadPosteriors(pos[2]));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableWriter> writer, MatrixTableWriter::Open(pos[3]));
  if (!spk2utt.empty()) {
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<TokenVectorTableReader> speakers,
                         TokenVectorTableReader::Open(spk2utt));
    GMM_ASSIGN_OR_RETURN(MatrixLookup features, MatrixLookup::Open(pos[1]));
    std::string speaker;
    std::vector<std::string> utterances;
    while (true) {
      GMM_ASSIGN_OR_RETURN(const bool more, speakers->Next(&speaker, &utterances));
      if (!more) break;
      FmllrStats stats(model.dim);
      for (const std::string& utt : utterances) {
        GMM_ASSIGN_OR_RETURN(std::optional<Matrix> feats, features.Take(utt));
        if (!feats) {
          Warn("Did not find features for utterance " + utt);
          ++totals->other_errors;
          continue;
        }
        const auto post = posteriors.find(utt);
        if (post == posteriors.end()) {
          Warn("Did not find posteriors for utterance " + utt);
          ++totals->no_posteriors;
          continue;
        }
        GMM_RETURN_IF_ERROR(Accumulate(model, utt, *feats, post->second, &stats, totals).status());
      }
      GMM_RETURN_IF_ERROR(Estimate(options, speaker, "speaker", stats, *writer, totals));
    }
  } else {
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableReader> features,
                         MatrixTableReader::Open(pos[1]));
    std::string utt;
    Matrix feats;
    while (true) {
      GMM_ASSIGN_OR_RETURN(const bool more, features->Next(&utt, &feats));
      if (!more) break;
      const auto post = posteriors.find(utt);
      if (post == posteriors.end()) {
        Warn("Did not find posts for utterance " + utt);
        ++totals->no_posteriors;
        continue;
      }
      FmllrStats stats(model.dim);
      GMM_ASSIGN_OR_RETURN(const bool used,
                           Accumulate(model, utt, feats, post->second, &stats, totals));
      if (!used) continue;
      GMM_RETURN_IF_ERROR(Estimate(options, utt, "utterance", stats, *writer, totals));
    }
  }
  return writer->Close();
}

}  // namespace

int RunGmmEstFmllr(int argc, char** argv) {
  Args args(kProgram,
            "[options] <model-in> <feature-rspecifier> <post-rspecifier> <transform-wspecifier>\n"
            "Estimate global fMLLR transforms, either per utterance or for the supplied\n"
            "set of speakers (spk2utt option).  Reads posteriors (on transition-ids).  Writes\n"
            "to a table of matrices.");
  args.Add({"spk2utt", "RSPECIFIER", "rspecifier for speaker to utterance-list map"})
      .Add({"fmllr-update-type", "TYPE",
            "Update type for fMLLR (\"full\"|\"diag\"|\"offset\"|\"none\")", "full"})
      .Add({"fmllr-min-count", "F", "Minimum count required to update fMLLR", "500"})
      .Add({"fmllr-num-iters", "N", "Number of iterations in fMLLR update phase.", "40"});
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 4) return Usage(args);
  FmllrOptions options;
  auto update = ParseFmllrUpdate(args.Get("fmllr-update-type"));
  auto min_count = args.GetDouble("fmllr-min-count");
  auto num_iters = args.GetInt("fmllr-num-iters");
  for (const absl::Status& s : {update.status(), min_count.status(), num_iters.status()}) {
    if (!s.ok()) return Fail(kProgram, s);
  }
  options.update = *update;
  options.min_count = *min_count;
  options.num_iters = int32_t(*num_iters);
  Totals totals;
  const std::string spk2utt = args.Has("spk2utt") ? args.Get("spk2utt") : "";
  if (absl::Status s = Run(options, spk2utt, pos, &totals); !s.ok()) return Fail(kProgram, s);
  Log(absl::StrCat("Done ", totals.done, " files, ", totals.no_posteriors, " with no posts, ",
                   totals.other_errors, " with other errors."));
  Log("Overall fMLLR auxf impr per frame is " +
      KaldiNumber(static_cast<float>(totals.improvement / totals.frames)) + " over " +
      KaldiNumber(totals.frames) + " frames.");
  return totals.done != 0 ? 0 : 1;
}

}  // namespace gmmscore

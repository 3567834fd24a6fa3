// Kaldi's gmm-est-fmllr and gmm-est-fmllr-gpost (run under those names): an fMLLR transform per
// speaker (--spk2utt) or per utterance (train/fmllr.h) from features and posteriors over
// transition-ids (gmm-est-fmllr) or the Gaussians' posteriors per pdf (gmm-est-fmllr-gpost, from
// gmm-post-to-gpost), with each tool's options, warnings, log lines and exit status.
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
#include "formats/table_by_key.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "train/fmllr.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// What differs between the two tools: the posteriors they read and their messages' words.
struct Tool {
  const char* program;
  const char* usage;
  const char* posts;                 // "posts" / "gposts": "... with no posts"
  const char* missing_utterance;     // per utterance: "Did not find posts for utterance "
  const char* wrong_size;            // per speaker: "Posterior vector has wrong size "
  const char* wrong_size_utterance;  // per utterance: "Posterior has wrong size "
  const char* utterance;             // "utterance" (gmm-est-fmllr-gpost logs "utterancer")
  const char* after_frames;          // what follows "N frames." in the per-speaker log line
};

constexpr Tool kEstFmllr{
    "gmm-est-fmllr",
    "[options] <model-in> <feature-rspecifier> <post-rspecifier> <transform-wspecifier>\n"
    "Estimate global fMLLR transforms, either per utterance or for the supplied\n"
    "set of speakers (spk2utt option).  Reads posteriors (on transition-ids).  Writes\n"
    "to a table of matrices.",
    "posts",
    "Did not find posts for utterance ",
    "Posterior vector has wrong size ",
    "Posterior has wrong size ",
    "utterance",
    ""};

constexpr Tool kEstFmllrGpost{
    "gmm-est-fmllr-gpost",
    "[options] <model-in> <feature-rspecifier> <gpost-rspecifier> <transform-wspecifier>\n"
    "Estimate global fMLLR transforms, either per utterance or for the supplied\n"
    "set of speakers (spk2utt option).  Reads Gaussian-level posteriors.  Writes\n"
    "to a table of matrices.",
    "gposts",
    "Did not find gposts for utterance ",
    "GaussPost vector has wrong size ",
    "GaussPost has wrong size ",
    "utterancer",
    "\n"};

void Log(const Tool& tool, const std::string& what) { KaldiLog(stderr, "LOG", tool.program, what); }
void Warn(const Tool& tool, const std::string& what) {
  KaldiLog(stderr, "WARNING", tool.program, what);
}

struct Totals {
  double improvement = 0.0, frames = 0.0;
  int64_t done = 0, no_posteriors = 0, other_errors = 0;
};

// gmm-est-fmllr's posteriors over transition-ids, gathered per pdf.
absl::Status AccumulateUtterance(const KaldiStoredModel& model, const Matrix& feats,
                                 const Posterior& posterior, FmllrStats* stats) {
  for (size_t t = 0; t < posterior.size(); ++t) {
    for (const auto& [tid, weight] : posterior[t]) {
      if (tid < 1 || tid > model.hmm->NumTransitionIds()) {
        return absl::InvalidArgumentError(
            absl::StrCat("frame ", t, ": transition-id ", tid, " is not in the model"));
      }
    }
  }
  return AccumulateFmllrForUtterance(model, feats, PosteriorToPdfs(*model.hmm, posterior), stats);
}

// gmm-est-fmllr-gpost's Gaussian posteriors, given per pdf.
absl::Status AccumulateUtterance(const KaldiStoredModel& model, const Matrix& feats,
                                 const GaussPosterior& posterior, FmllrStats* stats) {
  if (feats.cols != stats->dim()) {
    return absl::InvalidArgumentError(
        absl::StrCat("features of dimension ", feats.cols, ", the model's is ", stats->dim()));
  }
  for (size_t t = 0; t < posterior.size(); ++t) {
    for (const auto& [pdf, posteriors] : posterior[t]) {
      if (pdf < 0 || size_t(pdf) >= model.pdfs.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("frame ", t, ": pdf ", pdf, " is not in the model"));
      }
      const KaldiStoredGmm& gmm = model.pdfs[size_t(pdf)];
      if (posteriors.size() != size_t(gmm.num_gauss())) {
        return absl::InvalidArgumentError(absl::StrCat("frame ", t, ", pdf ", pdf, ": ",
                                                       posteriors.size(), " posteriors for ",
                                                       gmm.num_gauss(), " Gaussians"));
      }
      stats->AccumulateFromPosteriors(gmm, feats.row(int32_t(t)), posteriors.data());
    }
  }
  return absl::OkStatus();
}

// Accumulates an utterance; false (with a warning counted) where its size does not fit the
// features.
template <typename Value>
absl::StatusOr<bool> Accumulate(const Tool& tool, bool speaker, const KaldiStoredModel& model,
                                const std::string& utt, const Matrix& feats, const Value& posterior,
                                FmllrStats* stats, Totals* totals) {
  if (posterior.size() != size_t(feats.rows)) {
    Warn(tool, absl::StrCat(speaker ? tool.wrong_size : tool.wrong_size_utterance, posterior.size(),
                            " vs. ", feats.rows));
    ++totals->other_errors;
    return false;
  }
  absl::Status s = AccumulateUtterance(model, feats, posterior, stats);
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat("utterance ", utt, ": ", s.message()));
  ++totals->done;
  return true;
}

absl::Status Estimate(const Tool& tool, const FmllrOptions& options, const std::string& key,
                      bool speaker, FmllrStats& stats, MatrixTableWriter& writer, Totals* totals) {
  const FmllrEstimate estimate = EstimateFmllr(options, stats);
  for (const std::string& line : estimate.log_lines) Log(tool, line);
  for (const std::string& warning : estimate.warnings) Warn(tool, warning);
  GMM_RETURN_IF_ERROR(writer.Write(key, estimate.transform));
  Log(tool,
      absl::StrCat("For ", speaker ? "speaker" : tool.utterance, " ", key,
                   ", auxf-impr from fMLLR is ",
                   KaldiNumber(static_cast<float>(estimate.objective_change / estimate.count)),
                   ", over ", KaldiNumber(static_cast<float>(estimate.count)), " frames.",
                   speaker ? tool.after_frames : ""));
  totals->improvement += static_cast<float>(estimate.objective_change);
  totals->frames += static_cast<float>(estimate.count);
  return absl::OkStatus();
}

template <typename Reader, typename Value>
absl::Status Run(const Tool& tool, const FmllrOptions& options, const std::string& spk2utt,
                 const std::vector<std::string>& pos, Totals* totals) {
  GMM_ASSIGN_OR_RETURN(const KaldiStoredModel model, ReadKaldiStoredModel(pos[0], true, true));
  GMM_ASSIGN_OR_RETURN(const auto posteriors, (ReadTableByKey<Reader, Value>(pos[2])));
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
          Warn(tool, "Did not find features for utterance " + utt);
          ++totals->other_errors;
          continue;
        }
        const auto post = posteriors.find(utt);
        if (post == posteriors.end()) {
          Warn(tool, "Did not find posteriors for utterance " + utt);
          ++totals->no_posteriors;
          continue;
        }
        GMM_RETURN_IF_ERROR(
            Accumulate(tool, true, model, utt, *feats, post->second, &stats, totals).status());
      }
      GMM_RETURN_IF_ERROR(Estimate(tool, options, speaker, true, stats, *writer, totals));
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
        Warn(tool, tool.missing_utterance + utt);
        ++totals->no_posteriors;
        continue;
      }
      FmllrStats stats(model.dim);
      GMM_ASSIGN_OR_RETURN(const bool used, Accumulate(tool, false, model, utt, feats, post->second,
                                                       &stats, totals));
      if (!used) continue;
      GMM_RETURN_IF_ERROR(Estimate(tool, options, utt, false, stats, *writer, totals));
    }
  }
  return writer->Close();
}

template <typename Reader, typename Value>
int RunTool(const Tool& tool, int argc, char** argv) {
  Args args(tool.program, tool.usage);
  std::string spk2utt;
  FmllrOptions options;
  std::string update_type = FmllrUpdateName(options.update);
  args.Register("spk2utt", &spk2utt, "rspecifier for speaker to utterance-list map")
      .Register("fmllr-update-type", &update_type,
                "Update type for fMLLR (\"full\"|\"diag\"|\"offset\"|\"none\")")
      .Register("fmllr-min-count", &options.min_count, "Minimum count required to update fMLLR")
      .Register("fmllr-num-iters", &options.num_iters,
                "Number of iterations in fMLLR update phase.");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 4) return Usage(args);
  auto update = ParseFmllrUpdate(update_type);
  if (!update.ok()) return Fail(tool.program, update.status());
  options.update = *update;
  Totals totals;
  if (absl::Status s = Run<Reader, Value>(tool, options, spk2utt, pos, &totals); !s.ok()) {
    return Fail(tool.program, s);
  }
  Log(tool, absl::StrCat("Done ", totals.done, " files, ", totals.no_posteriors, " with no ",
                         tool.posts, ", ", totals.other_errors, " with other errors."));
  Log(tool, "Overall fMLLR auxf impr per frame is " +
                KaldiNumber(static_cast<float>(totals.improvement / totals.frames)) + " over " +
                KaldiNumber(totals.frames) + " frames.");
  return totals.done != 0 ? 0 : 1;
}

}  // namespace

int RunGmmEstFmllr(int argc, char** argv) {
  return RunTool<PosteriorTableReader, Posterior>(kEstFmllr, argc, argv);
}

int RunGmmEstFmllrGpost(int argc, char** argv) {
  return RunTool<GaussPostTableReader, GaussPosterior>(kEstFmllrGpost, argc, argv);
}

}  // namespace gmmscore

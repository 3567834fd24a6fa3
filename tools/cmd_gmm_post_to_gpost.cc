// Kaldi's gmm-post-to-gpost (run under that name): posteriors over transition-ids made into the
// posteriors of each pdf's Gaussians (align/posteriors.h), as align_fmllr.sh runs it under the
// speaker-independent model, with the tool's options, log lines and exit status.
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "align/posteriors.h"
#include "formats/kaldi_model_copy.h"
#include "formats/kaldi_tables.h"
#include "formats/matrix_table.h"
#include "formats/table_by_key.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "util/kaldi_random.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "gmm-post-to-gpost";

struct Totals {
  double like = 0.0, frames = 0.0;
  int64_t done = 0, no_posterior = 0, other_errors = 0;
};

absl::Status Convert(const std::vector<std::string>& pos, float rand_prune, Totals* totals) {
  GMM_ASSIGN_OR_RETURN(const KaldiStoredModel model, ReadKaldiStoredModel(pos[0], true, true));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableReader> features,
                       MatrixTableReader::Open(pos[1]));
  GMM_ASSIGN_OR_RETURN(const auto posteriors,
                       (ReadTableByKey<PosteriorTableReader, Posterior>(pos[2])));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<GaussPostTableWriter> writer,
                       GaussPostTableWriter::Open(pos[3]));
  // RandPrune's draws: rand()'s sequence, which Kaldi's tool never seeds.
  KaldiRandom random;
  std::string utt;
  Matrix feats;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, features->Next(&utt, &feats));
    if (!more) break;
    const auto posterior = posteriors.find(utt);
    if (posterior == posteriors.end()) {
      ++totals->no_posterior;
      continue;
    }
    if (posterior->second.size() != size_t(feats.rows)) {
      KaldiLog(stderr, "WARNING", kProgram,
               absl::StrCat("Posterior vector has wrong size ", posterior->second.size(), " vs. ",
                            feats.rows));
      ++totals->other_errors;
      continue;
    }
    float like = 0.0f, weight = 0.0f;
    auto gpost =
        ToGaussPosteriors(model, feats, posterior->second, rand_prune, &random, &like, &weight);
    if (!gpost.ok()) {
      return absl::Status(gpost.status().code(),
                          absl::StrCat("utterance ", utt, ": ", gpost.status().message()));
    }
    ++totals->done;
    if (VerboseLevel() >= 1) {
      KaldiLog(stderr, "VLOG[1]", kProgram,
               absl::StrCat("Average like for this file is ", KaldiNumber(like / weight), " over ",
                            KaldiNumber(weight), " frames."));
    }
    totals->like += like;
    totals->frames += weight;
    GMM_RETURN_IF_ERROR(writer->Write(utt, *gpost));
  }
  return writer->Close();
}

}  // namespace

int RunGmmPostToGpost(int argc, char** argv) {
  Args args(kProgram,
            "[options] <model-in> <feature-rspecifier> <posteriors-rspecifier> "
            "<gpost-wspecifier>\n"
            "Convert state-level posteriors to Gaussian-level posteriors\n"
            "e.g.: \n"
            " gmm-post-to-gpost 1.mdl scp:train.scp ark:1.post ark:1.gpost");
  bool binary = true;  // accepted, as Kaldi's is: the wspecifier says how the table is written
  float rand_prune = 0.0f;
  args.Register("binary", &binary, "Write output in binary mode")
      .Register("rand-prune", &rand_prune, "Randomized pruning of posteriors less than this");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 4) return Usage(args);
  if (rand_prune < 0) {
    return Fail(kProgram, absl::InvalidArgumentError("--rand-prune must not be negative"));
  }
  Totals totals;
  if (absl::Status s = Convert(pos, rand_prune, &totals); !s.ok()) {
    return Fail(kProgram, s);
  }
  KaldiLog(stderr, "LOG", kProgram,
           absl::StrCat("Done ", totals.done, " files, ", totals.no_posterior,
                        " with no posteriors, ", totals.other_errors, " with other errors."));
  KaldiLog(
      stderr, "LOG", kProgram,
      "Overall avg like per frame (Gaussian only) = " + KaldiNumber(totals.like / totals.frames) +
          " over " + KaldiNumber(totals.frames) + " frames.");
  KaldiLog(stderr, "LOG", kProgram, "Done converting post to gpost");
  return totals.done != 0 ? 0 : 1;
}

}  // namespace gmmscore

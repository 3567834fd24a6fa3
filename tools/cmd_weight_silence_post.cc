// Kaldi's weight-silence-post (run under that name): the posteriors of silence phones scaled
// (align/posteriors.h), as align_fmllr.sh and train_sat.sh leave silence out of fMLLR's statistics.
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "align/posteriors.h"
#include "formats/kaldi_model.h"
#include "formats/kaldi_tables.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "weight-silence-post";

struct Request {
  float weight = 0.0f;
  std::set<int32_t> silence;
  bool distribute = false;
};

absl::StatusOr<int64_t> Weight(const Request& request, const std::string& model_in,
                               const std::string& in, const std::string& out) {
  GMM_ASSIGN_OR_RETURN(const TransitionModel model, ReadKaldiTransitionModelFile(model_in));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<PosteriorTableReader> reader,
                       PosteriorTableReader::Open(in));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<PosteriorTableWriter> writer,
                       PosteriorTableWriter::Open(out));
  int64_t done = 0;
  std::string key;
  Posterior posterior;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&key, &posterior));
    if (!more) break;
    for (size_t t = 0; t < posterior.size(); ++t) {
      for (const auto& [tid, weight] : posterior[t]) {
        if (tid < 1 || tid > model.NumTransitionIds()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "utterance ", key, ", frame ", t, ": transition-id ", tid, " is not in ", model_in));
        }
      }
    }
    WeightSilencePosterior(model, request.silence, request.weight, request.distribute, &posterior);
    GMM_RETURN_IF_ERROR(writer->Write(key, posterior));
    ++done;
  }
  GMM_RETURN_IF_ERROR(writer->Close());
  return done;
}

}  // namespace

int RunWeightSilencePost(int argc, char** argv) {
  Args args(kProgram,
            "[options] <silence-weight> <silence-phones> <model> <posteriors-rspecifier> "
            "<posteriors-wspecifier>\n"
            "Apply weight to silences in posts\n"
            "e.g.: weight-silence-post 0.0 1:2:3 1.mdl ark:1.post ark:nosil.post");
  Request request;
  args.Register("distribute", &request.distribute,
                "If true, rather than weighting the individual posteriors, apply the weighting to "
                "the whole frame: i.e. on time t, scale all posterior entries by "
                "p(sil)*silence-weight + p(non-sil)*1.0");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 5) return Usage(args);
  if (!absl::SimpleAtof(pos[0], &request.weight)) {
    return Fail(kProgram,
                absl::InvalidArgumentError(
                    "Invalid silence-weight parameter: expected float, got \"" + pos[0] + "\""));
  }
  for (const absl::string_view part :
       pos[1].empty() ? std::vector<absl::string_view>{}
                      : std::vector<absl::string_view>(absl::StrSplit(pos[1], ':'))) {
    int32_t phone = 0;
    if (!absl::SimpleAtoi(part, &phone)) {
      return Fail(kProgram, absl::InvalidArgumentError("Invalid silence-phones string " + pos[1]));
    }
    request.silence.insert(phone);
  }
  if (request.silence.empty()) {
    KaldiLog(stderr, "WARNING", kProgram, "No silence phones, this will have no effect");
  }
  auto done = Weight(request, pos[2], pos[3], pos[4]);
  if (!done.ok()) return Fail(kProgram, done.status());
  KaldiLog(stderr, "LOG", kProgram, absl::StrCat("Done ", *done, " posteriors."));
  return *done != 0 ? 0 : 1;
}

}  // namespace gmmscore

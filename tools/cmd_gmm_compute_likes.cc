// Kaldi's gmm-compute-likes (run under that name): per utterance, the log-likelihood of every
// frame under every pdf (frames x pdfs), scored by gmmscore's scorer (Kaldi's numbers to float
// rounding: README.md) and written as Kaldi writes matrices.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "formats/kaldi_model.h"
#include "formats/matrix_table.h"
#include "kernels/backend.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "tools/score_table.h"

namespace gmmscore {

int RunGmmComputeLikes(int argc, char** argv) {
  constexpr char kProgram[] = "gmm-compute-likes";
  Args args(kProgram,
            "[options] model-in features-rspecifier likes-wspecifier\n"
            "Compute log-likelihoods from GMM-based model\n"
            "(outputs matrices of log-likelihoods indexed by (frame, pdf)\n"
            "e.g.: gmm-compute-likes final.mdl ark:feats.ark ark:loglikes.ark");
  // Scored on the CPU in one thread unless the options say otherwise (BackendRequest's own
  // defaults are the daemon's: auto, all threads).
  BackendRequest request{.backend = "cpu", .program = kProgram, .cpu_threads = 1};
  args.Register("backend", &request.backend, "cpu, cuda or auto: where the frames are scored")
      .Register("threads", &request.cpu_threads, "CPU threads, 0 for all");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 3) return Usage(args);
  auto model = ReadKaldiModelFile(pos[0]);
  if (!model.ok()) return Fail(kProgram, model.status());
  std::vector<GmmModel> models;
  models.push_back(*std::move(model));
  auto scorers = MakeFusedScorers(request, models, FusionSpec{});
  if (!scorers.ok()) return Fail(kProgram, scorers.status());
  auto writer = MatrixTableWriter::Open(pos[2], TextReals::kKaldi);
  if (!writer.ok()) return Fail(kProgram, writer.status());
  auto reader = MatrixTableReader::Open(pos[1]);
  if (!reader.ok()) return Fail(kProgram, reader.status());
  int64_t done = 0;
  if (absl::Status s = ScoreTable(reader->get(), writer->get(), *scorers, [&](int64_t) { ++done; });
      !s.ok()) {
    return Fail(kProgram, s);
  }
  if (absl::Status s = (*writer)->Close(); !s.ok()) return Fail(kProgram, s);
  KaldiLog(stderr, "LOG", kProgram,
           absl::StrCat("gmm-compute-likes: computed likelihoods for ", done, " utterances."));
  return 0;
}

}  // namespace gmmscore

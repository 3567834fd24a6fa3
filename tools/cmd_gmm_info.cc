// Kaldi's gmm-info (run under that name; `gmmscore info` describes any model in its own words):
// the counts recipes read from a model, one "name value" line each on stdout
// (train_mono.sh: `gmm-info $dir/0.mdl | grep gaussians`).
#include <cstdio>

#include "formats/kaldi_model.h"
#include "tools/command_util.h"
#include "tools/commands.h"

namespace gmmscore {

int RunGmmInfo(int argc, char** argv) {
  Args args("gmm-info",
            "[options] MODEL-IN\n"
            "Writes to standard output various properties of a GMM-based model (Kaldi's "
            "gmm-info).\n"
            "e.g.: gmm-info 1.mdl");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  if (args.positional().size() != 1) return Usage(args);
  auto model = ReadKaldiModelFile(args.positional()[0]);
  if (!model.ok()) return Fail("gmm-info", model.status());
  const TransitionModel& tm = model->hmm();
  std::printf("number of phones %zu\n", tm.topology().phones.size());
  std::printf("number of pdfs %d\n", tm.NumPdfs());
  std::printf("number of transition-ids %d\n", tm.NumTransitionIds());
  std::printf("number of transition-states %d\n", tm.NumTransitionStates());
  std::printf("feature dimension %d\n", model->dim());
  std::printf("number of gaussians %lld\n", static_cast<long long>(model->num_gauss()));
  return 0;
}

}  // namespace gmmscore

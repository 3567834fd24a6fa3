// Kaldi's gmm-copy (run under that name): a model copied, binary or text, byte for byte as Kaldi
// writes it (formats/kaldi_model_copy.h); --copy-tm / --copy-am copy one part alone.
#include <string>
#include <vector>

#include "formats/kaldi_model_copy.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"

namespace gmmscore {

int RunGmmCopy(int argc, char** argv) {
  constexpr char kProgram[] = "gmm-copy";
  Args args(kProgram,
            "[options] <model-in> <model-out>\n"
            "Copy GMM based model (and possibly change binary/text format)\n"
            "e.g.: gmm-copy --binary=false 1.mdl 1_txt.mdl");
  args.Add({"binary", "", "Write output in binary mode", "true"})
      .Add({"copy-am", "", "Copy the acoustic model (AmDiagGmm object)", "true"})
      .Add({"copy-tm", "", "Copy the transition model", "true"});
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 2) return Usage(args);
  auto model = ReadKaldiStoredModel(pos[0], args.GetBool("copy-tm"), args.GetBool("copy-am"));
  if (!model.ok()) return Fail(kProgram, model.status());
  if (absl::Status s = WriteKaldiStoredModel(*model, pos[1], args.GetBool("binary")); !s.ok()) {
    return Fail(kProgram, s);
  }
  KaldiLog(stderr, "LOG", kProgram, "Written model to " + pos[1]);
  return 0;
}

}  // namespace gmmscore

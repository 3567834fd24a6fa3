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
  bool binary = true, copy_am = true, copy_tm = true;
  args.Register("binary", &binary, "Write output in binary mode")
      .Register("copy-am", &copy_am, "Copy the acoustic model (AmDiagGmm object)")
      .Register("copy-tm", &copy_tm, "Copy the transition model");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 2) return Usage(args);
  auto model = ReadKaldiStoredModel(pos[0], copy_tm, copy_am);
  if (!model.ok()) return Fail(kProgram, model.status());
  if (absl::Status s = WriteKaldiStoredModel(*model, pos[1], binary); !s.ok()) {
    return Fail(kProgram, s);
  }
  KaldiLog(stderr, "LOG", kProgram, "Written model to " + pos[1]);
  return 0;
}

}  // namespace gmmscore

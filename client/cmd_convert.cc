// gmmscore convert: read a model in any format, write it in another.
#include <cstdio>

#include "client/command_util.h"
#include "client/commands.h"
#include "formats/model_io.h"

namespace gmmscore {

int RunConvert(int argc, char** argv) {
  Args args("convert", "IN OUT [--to FORMAT]");
  args.Add({"to", "FORMAT",
            "kaldi, kaldi-text, htk, sphinx or native (default: from OUT's name: .mdl, .txt.mdl, "
            ".mmf, .gmms, or a directory)"});
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  if (args.positional().size() != 2) {
    std::fprintf(stderr, "%s", args.Help().c_str());
    return 2;
  }
  const std::string& in = args.positional()[0];
  const std::string& out = args.positional()[1];
  auto format = args.Has("to") ? ParseModelFormat(args.Get("to")) : ModelFormatForOutput(out);
  if (!format.ok()) return Fail("convert", format.status());
  auto loaded = LoadModel(in);
  if (!loaded.ok()) return Fail("convert", loaded.status());
  if (absl::Status s = SaveModel(loaded->model, out, *format); !s.ok()) return Fail("convert", s);
  std::fprintf(stderr, "gmmscore convert: %s (%s, %d states, %lld Gaussians, dim %d) -> %s (%s)\n",
               in.c_str(), ModelFormatName(loaded->file_format).c_str(), loaded->model.num_states(),
               static_cast<long long>(loaded->model.num_gauss()), loaded->model.dim(), out.c_str(),
               ModelFormatName(*format).c_str());
  return 0;
}

}  // namespace gmmscore

// gmmscore convert: read a model in any format, write it in another. The input may also be
// random:STATESxGAUSSxDIM[:SEED], the random model the benchmarks use, to serve a model of a given
// size.
#include <cstdio>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "formats/model_io.h"
#include "model/random_model.h"
#include "tools/command_util.h"
#include "tools/commands.h"

namespace gmmscore {
namespace {

constexpr char kRandomPrefix[] = "random:";

// random:STATESxGAUSSxDIM[:SEED]: RandomModel (seed 42 unless given) with that many states, each
// of GAUSS Gaussians.
absl::StatusOr<LoadedModel> RandomModelFor(const std::string& spec) {
  const std::vector<std::string> fields =
      absl::StrSplit(spec.substr(sizeof(kRandomPrefix) - 1), ':');
  const std::vector<std::string> parts = absl::StrSplit(fields[0], 'x');
  int32_t sizes[3] = {0, 0, 0};
  uint32_t seed = 42;
  bool ok = parts.size() == 3 && fields.size() <= 2 &&
            (fields.size() == 1 || absl::SimpleAtoi(fields[1], &seed));
  for (size_t i = 0; ok && i < 3; ++i) ok = absl::SimpleAtoi(parts[i], &sizes[i]) && sizes[i] > 0;
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", spec, "': expected random:STATESxGAUSSxDIM[:SEED], e.g. random:5000x32x39"));
  }
  RandomModelOptions o;
  o.num_states = sizes[0];
  o.min_gauss = o.max_gauss = sizes[1];
  o.dim = sizes[2];
  LoadedModel loaded{RandomModel(o, seed), ModelFormat::kNative};
  return loaded;
}

}  // namespace

int RunConvert(int argc, char** argv) {
  Args args("convert", "IN OUT [--to FORMAT]   (IN may be random:STATESxGAUSSxDIM[:SEED])");
  std::string to;
  args.Register("to", &to,
                "kaldi, kaldi-text, htk, sphinx or native (default: from OUT's name: .mdl, "
                ".txt.mdl, .mmf, .gmms, or a directory)");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  if (args.positional().size() != 2) {
    std::fprintf(stderr, "%s", args.Help().c_str());
    return 2;
  }
  const std::string& in = args.positional()[0];
  const std::string& out = args.positional()[1];
  auto format = !to.empty() ? ParseModelFormat(to) : ModelFormatForOutput(out);
  if (!format.ok()) return Fail("convert", format.status());
  auto loaded = in.rfind(kRandomPrefix, 0) == 0 ? RandomModelFor(in) : LoadModel(in);
  if (!loaded.ok()) return Fail("convert", loaded.status());
  if (absl::Status s = SaveModel(loaded->model, out, *format); !s.ok()) return Fail("convert", s);
  std::fprintf(stderr, "gmmscore convert: %s (%s, %d states, %lld Gaussians, dim %d) -> %s (%s)\n",
               in.c_str(), ModelFormatName(loaded->file_format).c_str(), loaded->model.num_states(),
               static_cast<long long>(loaded->model.num_gauss()), loaded->model.dim(), out.c_str(),
               ModelFormatName(*format).c_str());
  return 0;
}

}  // namespace gmmscore

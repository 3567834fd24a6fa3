// OpenFst loaded the first time a program needs it: the module libgmmscore_openfst.so beside the
// program (the build tree) or in ../lib/gmmscore from it (an installed tree).
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fst/openfst.h"
#include "util/shared_library.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kModule[] = "libgmmscore_openfst.so";
constexpr char kEntryPoint[] = "gmmscore_openfst_functions";

absl::StatusOr<const OpenFstFunctions*> LoadModule() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path program = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot tell where this program is (/proc/self/exe): ", ec.message()));
  }
  const std::vector<fs::path> candidates = {program.parent_path() / kModule,
                                            program.parent_path() / "../lib/gmmscore" / kModule};
  std::string tried;
  for (const fs::path& path : candidates) {
    if (!fs::exists(path, ec)) {
      absl::StrAppend(&tried, tried.empty() ? "" : ", ", path.lexically_normal().string());
      continue;
    }
    GMM_ASSIGN_OR_RETURN(SharedLibrary module,
                         SharedLibrary::Open(path.c_str(), "reading or building an FST",
                                             "it is built and installed with this program"));
    const OpenFstFunctions* (*entry)() = nullptr;
    GMM_RETURN_IF_ERROR(module.Load(kEntryPoint, &entry));
    const OpenFstFunctions* functions = entry();
    if (functions == nullptr || functions->version != OpenFstFunctions::kVersion) {
      return absl::FailedPreconditionError(absl::StrCat(
          path.string(), " is of another build of gmmscore; install this build's module"));
    }
    return functions;
  }
  return absl::FailedPreconditionError(
      absl::StrCat("reading or building an FST needs OpenFst's module ", kModule,
                   ", which is not beside this program (looked for ", tried,
                   "); install gmmscore with `cmake --install`"));
}

}  // namespace

absl::StatusOr<const OpenFstFunctions*> OpenFst() {
  static const absl::StatusOr<const OpenFstFunctions*> functions = LoadModule();
  return functions;
}

}  // namespace gmmscore

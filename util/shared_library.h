// A shared library loaded the first time it is needed (dlopen), for dependencies that most runs of
// a program never use. A library linked in is loaded, relocated and initialised at every start of
// every process: libsndfile and its codecs cost 3.6 ms a start, OpenBLAS 8.6 ms (its threads), and
// a Kaldi tool that a recipe runs a thousand times does nothing else for most of its life
// (docs/PERFORMANCE.md, "Start-up"). A library once opened stays loaded for the process.
#pragma once

#include <dlfcn.h>

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace gmmscore {

class SharedLibrary {
 public:
  // Opens `soname` where the dynamic linker finds libraries. An error says who needed it (`user`)
  // and what to install (`package`, e.g. "Debian: apt-get install libsndfile1").
  static absl::StatusOr<SharedLibrary> Open(const char* soname, const std::string& user,
                                            const std::string& package) {
    void* handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      return absl::FailedPreconditionError(
          absl::StrCat(user, " needs ", soname, " (", package, "): ", why != nullptr ? why : ""));
    }
    return SharedLibrary(handle, soname);
  }

  // Sets *function to the library's function `symbol`; an error where the library has none.
  template <typename F>
  absl::Status Load(const char* symbol, F** function) const {
    void* address = dlsym(handle_, symbol);
    if (address == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(soname_, " has no ", symbol));
    }
    *function = reinterpret_cast<F*>(address);
    return absl::OkStatus();
  }

 private:
  SharedLibrary(void* handle, std::string soname) : handle_(handle), soname_(std::move(soname)) {}

  void* handle_;
  std::string soname_;
};

}  // namespace gmmscore

// The Sphinx model reader (formats/sphinx_model.h), through LoadModel on a directory: the input
// holds the five files, in the order below, separated by kSeparator (a missing one is left out).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "formats/model_io.h"
#include "fuzz/fuzz_util.h"

namespace {

constexpr const char* kFiles[] = {"mdef", "means", "variances", "mixture_weights",
                                  "transition_matrices"};
constexpr std::string_view kSeparator = "\n=====\n";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  const std::string dir = gmmscore::fuzz::ScratchDir() + "/sphinx";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto parts = gmmscore::fuzz::Split(gmmscore::fuzz::AsView(data, size), kSeparator);
  for (size_t i = 0; i < parts.size() && i < std::size(kFiles); ++i) {
    gmmscore::fuzz::WriteScratchFile(std::string("sphinx/") + kFiles[i], parts[i]);
  }
  (void)gmmscore::LoadModel(dir);
  return 0;
}

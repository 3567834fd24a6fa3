// MatrixTableReader (formats/matrix_table.h) on "ark:FILE", FILE the input's bytes: Kaldi
// archives of float, double and compressed matrices, binary or text, as `gmmscore score` reads
// features. Then the same file as a one-entry HTK and Sphinx table ("htk:FILE", "sphinx:FILE").
// Scripts ("scp:") are not fuzzed here: their lines name files and commands to run.
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/matrix_table.h"
#include "fuzz/fuzz_util.h"

namespace {

void ReadAll(const std::string& rspecifier) {
  auto reader = gmmscore::MatrixTableReader::Open(rspecifier);
  if (!reader.ok()) return;
  std::string key;
  gmmscore::Matrix value;
  for (int i = 0; i < 1000; ++i) {
    auto more = (*reader)->Next(&key, &value);
    if (!more.ok() || !*more) return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path =
      gmmscore::fuzz::WriteScratchFile("table", gmmscore::fuzz::AsView(data, size));
  ReadAll("ark:" + path);
  ReadAll("htk:" + path);
  ReadAll("sphinx:" + path);
  return 0;
}

// FstTableReader (formats/kaldi_fst.h) on "ark:FILE", FILE the input's bytes: archives of
// compiled training graphs, OpenFst binary or fstprint text, as `gmmscore align` reads them.
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/kaldi_fst.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path =
      gmmscore::fuzz::WriteScratchFile("graphs", gmmscore::fuzz::AsView(data, size));
  auto reader = gmmscore::FstTableReader::Open("ark:" + path);
  if (!reader.ok()) return 0;
  std::string key;
  gmmscore::AlignGraph graph;
  for (int i = 0; i < 1000; ++i) {
    auto more = (*reader)->Next(&key, &graph);
    if (!more.ok() || !*more) break;
  }
  return 0;
}

// Int32VectorTableReader (formats/kaldi_tables.h) on "ark:FILE", FILE the input's bytes: the
// alignment archives (binary or text) that Kaldi's tools and `gmmscore align` write.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "formats/kaldi_tables.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path =
      gmmscore::fuzz::WriteScratchFile("ali", gmmscore::fuzz::AsView(data, size));
  auto reader = gmmscore::Int32VectorTableReader::Open("ark:" + path);
  if (!reader.ok()) return 0;
  std::string key;
  std::vector<int32_t> value;
  for (int i = 0; i < 1000; ++i) {
    auto more = (*reader)->Next(&key, &value);
    if (!more.ok() || !*more) break;
  }
  return 0;
}

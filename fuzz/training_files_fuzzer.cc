// The readers of training's files (formats/kaldi_accs.h, kaldi_model.h, kaldi_tables.h), on the
// input's bytes after its first, which picks one: 0 an accumulator file (gmm-acc-stats-ali's
// output, ReadModelStatsFile), 1 a single DiagGmm file (ReadKaldiDiagGmmFile), 2 a Posterior
// table "ark:FILE" (PosteriorTableReader).
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "formats/kaldi_accs.h"
#include "formats/kaldi_model.h"
#include "formats/kaldi_tables.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string path =
      gmmscore::fuzz::WriteScratchFile("training", gmmscore::fuzz::AsView(data + 1, size - 1));
  switch (data[0] % 3) {
    case 0:
      (void)gmmscore::ReadModelStatsFile(path);
      break;
    case 1:
      (void)gmmscore::ReadKaldiDiagGmmFile(path);
      break;
    default: {
      auto reader = gmmscore::PosteriorTableReader::Open("ark:" + path);
      if (!reader.ok()) return 0;
      std::string key;
      std::vector<std::vector<std::pair<int32_t, float>>> frames;
      for (int i = 0; i < 1000; ++i) {
        auto more = (*reader)->Next(&key, &frames);
        if (!more.ok() || !*more) break;
      }
    }
  }
  return 0;
}

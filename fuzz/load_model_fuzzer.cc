// LoadModel (formats/model_io.h) on a file of the input's bytes: format detection and the Kaldi
// binary and text, HTK MMF and native readers, as `gmmscore` and gmmscored read a model file.
#include <cstddef>
#include <cstdint>

#include "formats/model_io.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path =
      gmmscore::fuzz::WriteScratchFile("model", gmmscore::fuzz::AsView(data, size));
  (void)gmmscore::LoadModel(path);         // an error status is fine; a crash is a finding
  (void)gmmscore::LoadModel(path, 1e-3f);  // with a variance floor
  return 0;
}

// The feature file readers on an in-memory stream: HTK parameter files
// (formats/htk_features.h) and Sphinx .mfc files (formats/sphinx_features.h, 13 and 39 values a
// frame).
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "formats/htk_features.h"
#include "formats/sphinx_features.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  {
    std::istringstream is(bytes);
    (void)gmmscore::ReadHtkFeatures(is, "fuzz");
  }
  for (int32_t dim : {13, 39}) {
    std::istringstream is(bytes);
    (void)gmmscore::ReadSphinxFeatures(is, "fuzz", dim);
  }
  return 0;
}

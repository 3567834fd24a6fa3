// The table specifier parsers (formats/table_specifier.h) on the input as a string. Only parsed:
// opening a specifier could run the command of a pipe.
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/table_specifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string spec(reinterpret_cast<const char*>(data), size);
  (void)gmmscore::ParseRspecifier(spec);
  (void)gmmscore::ParseWspecifier(spec);
  return 0;
}

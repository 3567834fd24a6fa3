// The Kaldi readers on an in-memory stream (formats/kaldi_model.h, formats/kaldi_io.h): a whole
// model (TransitionModel + AmDiagGmm), then a matrix, a float vector and an int32 vector, each
// from the start of the input, binary when it starts with "\0B", else text.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "formats/kaldi_io.h"
#include "formats/kaldi_model.h"

namespace {

template <typename Read>
void ReadObject(const std::string& bytes, Read read) {
  std::istringstream is(bytes);
  const bool binary = gmmscore::KaldiReader::ConsumeBinaryMarker(is);
  gmmscore::KaldiReader in(is, "fuzz", binary);
  (void)read(in);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  {
    std::istringstream is(bytes);
    (void)gmmscore::ReadKaldiModel(is, "fuzz");
  }
  ReadObject(bytes, [](gmmscore::KaldiReader& in) { return in.FloatMatrix(); });
  ReadObject(bytes, [](gmmscore::KaldiReader& in) { return in.FloatVector(); });
  ReadObject(bytes, [](gmmscore::KaldiReader& in) { return in.Int32Vector(); });
  return 0;
}

#include "feat/wave_writer.h"

#include <cmath>
#include <limits>
#include <string>

namespace gmmscore {
namespace {

void PutLittleEndian(std::string* out, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

}  // namespace

int64_t WriteWave(const WaveData& wave, std::ostream& os) {
  const uint32_t channels = static_cast<uint32_t>(wave.channels.size());
  const uint32_t samples = static_cast<uint32_t>(wave.num_samples());
  const uint32_t rate = static_cast<uint32_t>(static_cast<int32_t>(wave.sample_rate));
  const uint32_t data_bytes = channels * samples * 2;
  std::string bytes = "RIFF";
  PutLittleEndian(&bytes, 36 + data_bytes, 4);
  bytes += "WAVEfmt ";
  PutLittleEndian(&bytes, 16, 4);
  PutLittleEndian(&bytes, 1, 2);  // PCM
  PutLittleEndian(&bytes, channels, 2);
  PutLittleEndian(&bytes, rate, 4);
  PutLittleEndian(&bytes, rate * channels * 2, 4);
  PutLittleEndian(&bytes, channels * 2, 2);
  PutLittleEndian(&bytes, 16, 2);
  bytes += "data";
  PutLittleEndian(&bytes, data_bytes, 4);
  int64_t clipped = 0;
  for (uint32_t i = 0; i < samples; ++i) {
    for (const std::vector<float>& channel : wave.channels) {
      const double value = std::trunc(static_cast<double>(channel[i]));
      int32_t sample = 0;
      // NaN too, as Kaldi's conversion to int32 makes it the most negative integer on x86.
      if (!(value >= std::numeric_limits<int16_t>::min())) {
        sample = std::numeric_limits<int16_t>::min();
        ++clipped;
      } else if (value > std::numeric_limits<int16_t>::max()) {
        sample = std::numeric_limits<int16_t>::max();
        ++clipped;
      } else {
        sample = static_cast<int32_t>(value);
      }
      PutLittleEndian(&bytes, static_cast<uint16_t>(static_cast<int16_t>(sample)), 2);
    }
  }
  os.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return clipped;
}

}  // namespace gmmscore

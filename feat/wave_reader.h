// Audio in: RIFF/WAVE files as Kaldi's WaveHolder reads them (feat/wave-reader.h): the samples of
// each channel as floats on the 16-bit integer scale (a full-scale sample is 32767, not 1.0), the
// sample rate, and the file's name in every error.
//
// libsndfile decodes the bytes. This reader only finds where the object ends, as Kaldi does: a
// RIFF chunk's declared size, or, where a writer could not know the size (writers to a pipe put
// 0, 0xFFFFFFFF or, sox, 0x7FFFF000 and a little more there), the end of the input. So a wav.scp
// entry may be a file, a "CMD |" pipe or an "ARCHIVE:OFFSET", and an archive may hold several WAVE
// objects in a row.
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "formats/table_entries.h"

namespace gmmscore {

struct WaveData {
  double sample_rate = 0;
  // channels[c][i]: channel c's sample i.
  std::vector<std::vector<float>> channels;

  int64_t num_samples() const { return channels.empty() ? 0 : int64_t(channels[0].size()); }
  double duration_seconds() const {
    return sample_rate > 0 ? static_cast<double>(num_samples()) / sample_rate : 0;
  }
};

// The most a WAVE object may hold, so that a corrupt size field cannot ask for absurd memory:
// 4 GiB, past which RIFF's 32-bit sizes cannot go anyway.
inline constexpr int64_t kMaxWaveBytes = int64_t{1} << 32;

// Reads one WAVE object from the stream's current position. name says what errors call the input.
absl::StatusOr<WaveData> ReadWave(std::istream& in, const std::string& name);

// Reads a Kaldi table of WAVE objects: "scp:wav.scp" (files, pipes, ARCHIVE:OFFSET) or "ark:F".
class WaveTableReader {
 public:
  static absl::StatusOr<std::unique_ptr<WaveTableReader>> Open(const std::string& rspecifier);
  absl::StatusOr<bool> Next(std::string* key, WaveData* wave);

 private:
  explicit WaveTableReader(std::unique_ptr<TableEntryReader> entries)
      : entries_(std::move(entries)) {}
  std::unique_ptr<TableEntryReader> entries_;
};

}  // namespace gmmscore

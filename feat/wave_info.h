// The header of a RIFF/WAVE object read as Kaldi's WaveInfo reads it (wav-to-duration without
// --read-entire-file): chunks before "fmt " and between it and "data" skipped, 16-bit PCM only
// (WAVE_FORMAT_EXTENSIBLE with the PCM subtype too), byte rate and block alignment checked, the
// number of samples from the data chunk's size. A writer to a pipe leaves sizes it cannot know
// (0, 0xFFFFFFFF, or sox's 0x7FFFF000): such a header is "streamed" and has no number of samples.
// RIFX (big-endian) headers are read too.
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "formats/table_entries.h"

namespace gmmscore {

struct WaveInfo {
  float sample_rate = 0;
  int32_t channels = 0;
  int64_t samples = -1;  // per channel; -1: streamed

  bool streamed() const { return samples < 0; }
  // Seconds, in float as Kaldi computes them.
  float duration() const { return static_cast<float>(samples) / sample_rate; }
};

// Reads the header at the stream's position and, where the header gives the object's size, skips
// the rest of the object (the next archive entry follows it; a pipe is drained). Errors name
// `name`.
absl::StatusOr<WaveInfo> ReadWaveInfo(std::istream& in, const std::string& name);

// A table of WAVE objects read for their headers: "scp:wav.scp" (files, pipes, ARCHIVE:OFFSET)
// or "ark:F".
class WaveInfoTableReader {
 public:
  static absl::StatusOr<std::unique_ptr<WaveInfoTableReader>> Open(const std::string& rspecifier);
  absl::StatusOr<bool> Next(std::string* key, WaveInfo* info);

 private:
  explicit WaveInfoTableReader(std::unique_ptr<TableEntryReader> entries)
      : entries_(std::move(entries)) {}
  std::unique_ptr<TableEntryReader> entries_;
};

}  // namespace gmmscore

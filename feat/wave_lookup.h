// Recordings by key, as Kaldi's RandomAccessTableReader<WaveHolder> gives them to
// extract-segments: from "scp:", the script's entry for the key read when it is asked for (the
// last one kept, as segments come recording by recording); from "ark:", the archive read forward
// as far as a key needs, every recording passed over kept.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "feat/wave_reader.h"
#include "formats/kaldi_stream.h"

namespace gmmscore {

class WaveLookup {
 public:
  static absl::StatusOr<std::unique_ptr<WaveLookup>> Open(const std::string& rspecifier);

  // The recording, or nullptr where the table has no such key; valid until the next call. An
  // entry that cannot be read is an error naming it.
  absl::StatusOr<const WaveData*> Find(const std::string& key);

 private:
  WaveLookup() = default;

  std::map<std::string, Rxfilename> script_;  // "scp:": where each recording is
  std::string last_key_;                      // "scp:": the recording read last
  std::unique_ptr<WaveTableReader> archive_;  // "ark:": read forward
  std::map<std::string, WaveData> read_;      // "ark:": every recording read; "scp:": the last
  bool archive_done_ = false;
};

}  // namespace gmmscore

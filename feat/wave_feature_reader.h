// A table of audio read as a table of features: each WAVE object of WAV-RSPEC goes through the
// front end (feat/compute_features.h) as it is read, so that every consumer of a MatrixTableReader
// (gmmscore score --wav, align) takes audio where it takes features. The first channel is used;
// speaker CMVN, which needs an utterance-to-speaker map, is refused.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "feat/front_end_options.h"
#include "feat/wave_reader.h"
#include "formats/matrix_table.h"

namespace gmmscore {

class WaveFeatureTableReader : public MatrixTableReader {
 public:
  static absl::StatusOr<std::unique_ptr<WaveFeatureTableReader>> Open(
      const std::string& wav_rspecifier, const FrontEndOptions& opts);
  absl::StatusOr<bool> Next(std::string* key, Matrix* value) override;

 private:
  WaveFeatureTableReader(std::unique_ptr<WaveTableReader> waves, const FrontEndOptions& opts)
      : waves_(std::move(waves)), opts_(opts) {}
  std::unique_ptr<WaveTableReader> waves_;
  FrontEndOptions opts_;
};

}  // namespace gmmscore

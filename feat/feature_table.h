// The front end over a table of recordings (gmmscore compute-feats, Kaldi's compute-mfcc-feats with
// apply-cmvn and add-deltas folded in): per utterance, pick the channel, skip what is too short,
// compute the base features, subtract the mean where asked, record the duration, and write the
// finished features in input order once their CMVN statistics are complete (CmvnQueue).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feat/feature_window.h"
#include "feat/front_end_options.h"
#include "feat/wave_reader.h"
#include "formats/kaldi_tables.h"
#include "formats/matrix_table.h"

namespace gmmscore {

// compute-mfcc-feats' options about the table rather than the features.
struct FeatureTableOptions {
  int32_t channel = -1;       // -1: the first, noted where a recording has more
  float min_duration = 0.0f;  // seconds; shorter recordings are skipped
  float vtln_warp = 1.0f;
  bool subtract_mean = false;  // per utterance, before any CMVN
};

// What the table's utterances ran into; the tool words each as its Kaldi counterpart logs it.
class FeatureTableNotes {
 public:
  virtual ~FeatureTableNotes() = default;
  virtual void ChannelDefaulted(int32_t num_channels) = 0;  // no --channel, several channels
  virtual void NoSuchChannel(const std::string& key, int32_t num_channels, int32_t channel) = 0;
  virtual void TooShort(const std::string& key, double seconds) = 0;
  virtual void Failed(const std::string& key, const absl::Status& why) = 0;
  virtual void NoSpeaker(const std::string& key) = 0;  // --cmvn=speaker, not in utt2spk
};

struct FeatureTableCounts {
  int64_t utterances = 0;  // read
  int64_t done = 0;        // written (the others were noted)
};

// Reads every recording of waves and writes its features to feats (and, where utt2dur is not
// null, its duration). utt2spk serves --cmvn=speaker. The dither draws from dither where that is
// not null (Kaldi's rand() sequence over the table), else from each utterance's own seeded noise.
// An error stops the table: reading, writing, or finishing features.
absl::StatusOr<FeatureTableCounts> ComputeFeatureTable(
    const FrontEndOptions& opts, const FeatureTableOptions& table,
    std::map<std::string, std::string> utt2spk, WaveTableReader& waves, MatrixTableWriter& feats,
    FloatTableWriter* utt2dur, DitherNoise* dither, FeatureTableNotes& notes);

}  // namespace gmmscore

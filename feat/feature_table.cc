#include "feat/feature_table.h"

#include <utility>

#include "feat/cmvn.h"
#include "feat/cmvn_queue.h"
#include "feat/compute_features.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<FeatureTableCounts> ComputeFeatureTable(
    const FrontEndOptions& opts, const FeatureTableOptions& table,
    std::map<std::string, std::string> utt2spk, WaveTableReader& waves, MatrixTableWriter& feats,
    FloatTableWriter* utt2dur, DitherNoise* dither, FeatureTableNotes& notes) {
  CmvnQueue queue(opts, std::move(utt2spk), [&](const std::string& key, const Matrix& finished) {
    return feats.Write(key, finished);
  });
  FeatureTableCounts counts;
  std::string key;
  WaveData wave;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, waves.Next(&key, &wave));
    if (!more) break;
    ++counts.utterances;
    const int32_t num_channels = static_cast<int32_t>(wave.channels.size());
    int32_t channel = table.channel;
    if (channel == -1) {
      channel = 0;
      if (num_channels != 1) notes.ChannelDefaulted(num_channels);
    } else if (channel < 0 || channel >= num_channels) {
      notes.NoSuchChannel(key, num_channels, table.channel);
      continue;
    }
    if (wave.duration_seconds() < table.min_duration) {
      notes.TooShort(key, wave.duration_seconds());
      continue;
    }
    auto base = ComputeBaseFeatures(opts, wave.channels[size_t(channel)], wave.sample_rate,
                                    table.vtln_warp, key, dither);
    if (!base.ok()) {
      notes.Failed(key, base.status());
      continue;
    }
    if (table.subtract_mean && base->rows > 0) {
      CmvnStats stats(base->cols);
      stats.AddFrames(*base);
      ApplyCmvn(stats, /*norm_vars=*/false, &*base);
    }
    if (utt2dur != nullptr) {
      GMM_RETURN_IF_ERROR(utt2dur->Write(key, static_cast<float>(wave.duration_seconds())));
    }
    if (absl::Status s = queue.Add(key, std::move(*base)); absl::IsNotFound(s)) {
      notes.NoSpeaker(key);
      continue;
    } else if (!s.ok()) {
      return s;
    }
    ++counts.done;
  }
  GMM_RETURN_IF_ERROR(queue.Flush());
  return counts;
}

}  // namespace gmmscore

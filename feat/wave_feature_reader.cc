#include "feat/wave_feature_reader.h"

#include "absl/strings/str_cat.h"
#include "feat/compute_features.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<std::unique_ptr<WaveFeatureTableReader>> WaveFeatureTableReader::Open(
    const std::string& wav_rspecifier, const FrontEndOptions& opts) {
  GMM_RETURN_IF_ERROR(opts.Validate());
  if (opts.cmvn == CmvnMode::kSpeaker) {
    return absl::InvalidArgumentError(
        "--cmvn=speaker needs an utterance-to-speaker map: compute the features with "
        "gmmscore compute-feats --utt2spk");
  }
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<WaveTableReader> waves,
                       WaveTableReader::Open(wav_rspecifier));
  return std::unique_ptr<WaveFeatureTableReader>(
      new WaveFeatureTableReader(std::move(waves), opts));
}

absl::StatusOr<bool> WaveFeatureTableReader::Next(std::string* key, Matrix* value) {
  WaveData wave;
  GMM_ASSIGN_OR_RETURN(const bool more, waves_->Next(key, &wave));
  if (!more) return false;
  auto base = ComputeBaseFeatures(opts_, wave.channels[0], wave.sample_rate, 1.0, *key);
  if (!base.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("utterance ", *key, ": ", base.status().message()));
  }
  CmvnStats stats(base->cols);
  if (opts_.cmvn == CmvnMode::kUtterance) stats.AddFrames(*base);
  auto finished = FinishFeatures(opts_, std::move(*base), stats);
  if (!finished.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("utterance ", *key, ": ", finished.status().message()));
  }
  *value = *std::move(finished);
  return true;
}

}  // namespace gmmscore

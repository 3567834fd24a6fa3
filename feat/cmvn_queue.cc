#include "feat/cmvn_queue.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "feat/compute_features.h"
#include "util/status_macros.h"

namespace gmmscore {

CmvnQueue::CmvnQueue(const FrontEndOptions& opts, std::map<std::string, std::string> utt2spk,
                     Sink sink)
    : opts_(opts), utt2spk_(std::move(utt2spk)), sink_(std::move(sink)) {
  if (opts_.cmvn == CmvnMode::kSpeaker) {
    for (const auto& [utt, spk] : utt2spk_) ++remaining_[spk];
  }
}

absl::Status CmvnQueue::Add(const std::string& key, Matrix base) {
  std::string speaker = key;  // each utterance its own "speaker", but for --cmvn=speaker
  if (opts_.cmvn == CmvnMode::kSpeaker) {
    const auto it = utt2spk_.find(key);
    if (it == utt2spk_.end()) return absl::NotFoundError(absl::StrCat("no speaker for ", key));
    speaker = it->second;
    --remaining_[speaker];
  }
  CmvnStats& stats = stats_.try_emplace(speaker, base.cols).first->second;
  if (opts_.cmvn == CmvnMode::kUtterance) stats = CmvnStats(base.cols);
  stats.AddFrames(base);
  waiting_.push_back({key, speaker, std::move(base)});
  GMM_RETURN_IF_ERROR(SinkReady(/*all=*/false));
  if (opts_.cmvn != CmvnMode::kSpeaker) stats_.erase(speaker);
  return absl::OkStatus();
}

absl::Status CmvnQueue::Flush() { return SinkReady(/*all=*/true); }

absl::Status CmvnQueue::SinkReady(bool all) {
  while (!waiting_.empty() && (all || remaining_[waiting_.front().speaker] == 0)) {
    Waiting& w = waiting_.front();
    GMM_ASSIGN_OR_RETURN(const Matrix feats,
                         FinishFeatures(opts_, std::move(w.base), stats_[w.speaker]));
    GMM_RETURN_IF_ERROR(sink_(w.key, feats));
    waiting_.pop_front();
  }
  return absl::OkStatus();
}

}  // namespace gmmscore

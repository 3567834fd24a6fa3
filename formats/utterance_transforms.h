// Feature transforms looked up by utterance: a table keyed by utterance, or by speaker through an
// utt2spk map, as transform-feats reads its transform rspecifier with and without --utt2spk
// (fMLLR transforms are per speaker: align_fmllr.sh's trans.*).
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "util/matrix.h"

namespace gmmscore {

class UtteranceTransforms {
 public:
  // Reads the whole table; utt2spk_rspecifier empty: the table is keyed by utterance.
  static absl::StatusOr<UtteranceTransforms> Open(const std::string& rspecifier,
                                                  const std::string& utt2spk_rspecifier);
  // Transforms keyed by speaker, each utterance's speaker given by utt2spk.
  UtteranceTransforms(std::map<std::string, Matrix> by_speaker,
                      std::map<std::string, std::string> utt2spk);

  // The utterance's transform, or null where it (or its speaker) has none.
  const Matrix* Find(const std::string& utt) const;

 private:
  UtteranceTransforms() = default;

  std::map<std::string, Matrix> by_key_;
  std::map<std::string, std::string> utt2spk_;
  bool by_speaker_ = false;
};

}  // namespace gmmscore

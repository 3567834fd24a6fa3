#include "formats/utterance_transforms.h"

#include <utility>

#include "formats/kaldi_tables.h"
#include "formats/matrix_table.h"
#include "formats/table_by_key.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<UtteranceTransforms> UtteranceTransforms::Open(
    const std::string& rspecifier, const std::string& utt2spk_rspecifier) {
  UtteranceTransforms transforms;
  GMM_ASSIGN_OR_RETURN(transforms.by_key_, (ReadTableByKey<MatrixTableReader, Matrix>(rspecifier)));
  if (!utt2spk_rspecifier.empty()) {
    GMM_ASSIGN_OR_RETURN(transforms.utt2spk_, ReadTokenMap(utt2spk_rspecifier));
    transforms.by_speaker_ = true;
  }
  return transforms;
}

UtteranceTransforms::UtteranceTransforms(std::map<std::string, Matrix> by_speaker,
                                         std::map<std::string, std::string> utt2spk)
    : by_key_(std::move(by_speaker)), utt2spk_(std::move(utt2spk)), by_speaker_(true) {}

const Matrix* UtteranceTransforms::Find(const std::string& utt) const {
  const std::string* key = &utt;
  if (by_speaker_) {
    const auto spk = utt2spk_.find(utt);
    if (spk == utt2spk_.end()) return nullptr;
    key = &spk->second;
  }
  const auto it = by_key_.find(*key);
  return it == by_key_.end() ? nullptr : &it->second;
}

}  // namespace gmmscore

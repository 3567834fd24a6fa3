// Kaldi's lists of phone sets, one set a line (data/lang/phones/sets.int, which
// gmm-init-mono --shared-phones reads): phone ids separated by spaces or tabs ("\r" too).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gmmscore {

// The sets of an rxfilename, each sorted (Kaldi's ReadSharedPhonesList). A word that is not an
// integer, a phone twice on one line and an empty line (a set Kaldi could not use) are errors
// naming the file and line.
absl::StatusOr<std::vector<std::vector<int32_t>>> ReadPhoneSetsFile(const std::string& rxfilename);

}  // namespace gmmscore

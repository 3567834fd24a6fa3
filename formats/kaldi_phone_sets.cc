#include "formats/kaldi_phone_sets.h"

#include <algorithm>
#include <istream>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "formats/kaldi_stream.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<std::vector<std::vector<int32_t>>> ReadPhoneSetsFile(const std::string& rxfilename) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> input, InputStream::Open(rxfilename));
  std::vector<std::vector<int32_t>> sets;
  std::string line;
  for (int64_t number = 1; std::getline(input->stream(), line); ++number) {
    const std::string where = absl::StrCat(input->name(), ":", number, ": ");
    std::vector<int32_t> set;
    for (const absl::string_view word :
         absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty())) {
      int32_t phone = 0;
      if (!absl::SimpleAtoi(word, &phone)) {
        return absl::InvalidArgumentError(absl::StrCat(where, "bad line in the phone sets: '",
                                                       word.substr(0, 40), "' is not an integer"));
      }
      set.push_back(phone);
    }
    if (set.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(where, "an empty line is an empty phone set"));
    }
    std::sort(set.begin(), set.end());
    if (std::adjacent_find(set.begin(), set.end()) != set.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, "bad line in the phone sets (a phone repeated): ", line.substr(0, 200)));
    }
    sets.push_back(std::move(set));
  }
  GMM_RETURN_IF_ERROR(input->Close());
  return sets;
}

}  // namespace gmmscore

#include "align/show_alignment.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "align/phone_segments.h"

namespace gmmscore {

absl::StatusOr<std::string> ShowAlignment(const TransitionModel& model,
                                          absl::FunctionRef<std::string(int32_t)> phone_name,
                                          const std::string& key,
                                          const std::vector<int32_t>& alignment) {
  for (size_t t = 0; t < alignment.size(); ++t) {
    if (alignment[t] < 1 || alignment[t] > model.NumTransitionIds()) {
      return absl::InvalidArgumentError(
          absl::StrCat("utterance ", key, ", frame ", t, ": transition-id ", alignment[t],
                       " is not in the model (1..", model.NumTransitionIds(), ")"));
    }
  }
  std::string ids = key + "  ", names = key + "  ";
  for (const PhoneSegment& segment : SplitToPhones(model, alignment)) {
    std::string id_column = "[ ";
    for (int32_t t = segment.first_frame; t < segment.first_frame + segment.frames; ++t) {
      absl::StrAppend(&id_column, alignment[t], " ");
    }
    id_column += "] ";
    std::string name_column = phone_name(segment.phone) + " ";
    const size_t width = std::max(id_column.size(), name_column.size());
    id_column.resize(width, ' ');
    name_column.resize(width, ' ');
    ids += id_column;
    names += name_column;
  }
  return absl::StrCat(ids, "\n", names, "\n\n");
}

}  // namespace gmmscore

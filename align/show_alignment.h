// An alignment as Kaldi's show-alignments prints it: cut into phones (align/phone_segments.h),
// each phone's transition-ids in brackets on one line and its name under them on the next, each
// column padded with spaces to the wider of the two, then an empty line:
//
//   utt1  [ 2 1 1 ] [ 8 7 10 ]
//   utt1  SIL       aa
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "model/transition_model.h"

namespace gmmscore {

// The three lines for one utterance; an error names the frame of a transition-id that is not
// the model's.
absl::StatusOr<std::string> ShowAlignment(const TransitionModel& model,
                                          absl::FunctionRef<std::string(int32_t)> phone_name,
                                          const std::string& key,
                                          const std::vector<int32_t>& alignment);

}  // namespace gmmscore

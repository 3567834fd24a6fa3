// An alignment cut into phone instances, as Kaldi's SplitToPhones cuts it (ali-to-phones): a
// phone ends after the transition into its final state (where the graph was compiled with
// self-loops reordered after the forward transitions, after the self-loops that follow it), or
// where the phone changes, and the CTM lines ali-to-phones --ctm-output writes from them.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "model/transition_model.h"

namespace gmmscore {

struct PhoneSegment {
  int32_t phone = 0;
  int32_t first_frame = 0;
  int32_t frames = 0;
};

// The phone instances of an alignment, in order; *plausible (if given) is false where the cut had
// to guess (a phone that does not end in its final state, or begins past its first state), as
// Kaldi's return value says.
std::vector<PhoneSegment> SplitToPhones(const TransitionModel& model,
                                        const std::vector<int32_t>& alignment,
                                        bool* plausible = nullptr);

// "UTT 1 START DURATION PHONE" lines, START accumulated in float from frame_shift as
// ali-to-phones does, fixed with 2 decimals (3 below a 10 ms frame shift).
std::string CtmLines(const std::string& utterance, const std::vector<PhoneSegment>& segments,
                     float frame_shift = 0.01f);

}  // namespace gmmscore

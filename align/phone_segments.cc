#include "align/phone_segments.h"

#include <sstream>

namespace gmmscore {
namespace {

// Whether the graph put self-loops after the forward transition of a state: the first change of
// transition-state in the alignment tells (a self-loop before it: reordered).
bool IsReordered(const TransitionModel& model, const std::vector<int32_t>& alignment) {
  for (size_t i = 0; i + 1 < alignment.size(); ++i) {
    if (model.TransitionIdToTransitionState(alignment[i]) ==
        model.TransitionIdToTransitionState(alignment[i + 1])) {
      continue;
    }
    if (model.IsSelfLoop(alignment[i])) return true;
    if (model.IsSelfLoop(alignment[i + 1])) return false;
  }
  return !alignment.empty() && !model.IsSelfLoop(alignment.front()) &&
         model.IsSelfLoop(alignment.back());
}

}  // namespace

std::vector<PhoneSegment> SplitToPhones(const TransitionModel& model,
                                        const std::vector<int32_t>& alignment, bool* plausible) {
  bool ok = true;
  std::vector<size_t> ends;  // one past each phone's last frame
  const bool reordered = IsReordered(model, alignment);
  for (size_t i = 0; i < alignment.size(); ++i) {
    if (model.IsFinal(alignment[i])) {
      if (reordered) {
        while (i + 1 < alignment.size() && model.IsSelfLoop(alignment[i + 1])) ++i;
      }
      ends.push_back(i + 1);
    } else if (i + 1 == alignment.size()) {
      ok = false;
      ends.push_back(i + 1);
    } else if (model.TransitionIdToPhone(alignment[i]) !=
               model.TransitionIdToPhone(alignment[i + 1])) {
      ok = false;
      ends.push_back(i + 1);
    }
  }
  std::vector<PhoneSegment> segments;
  size_t begin = 0;
  for (size_t end : ends) {
    const int32_t tid = alignment[begin];
    const int32_t phone = model.TransitionIdToPhone(tid);
    if (model.topology().TopologyForPhone(phone)[0].forward_pdf_class != kNoPdf &&
        model.TransitionIdToHmmState(tid) != 0) {
      ok = false;
    }
    segments.push_back({phone, int32_t(begin), int32_t(end - begin)});
    begin = end;
  }
  if (plausible != nullptr) *plausible = ok;
  return segments;
}

std::string CtmLines(const std::string& utterance, const std::vector<PhoneSegment>& segments,
                     float frame_shift) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(frame_shift >= 0.01f ? 2 : 3);
  float start = 0.0f;
  for (const PhoneSegment& s : segments) {
    const float duration = frame_shift * float(s.frames);
    out << utterance << " 1 " << start << " " << duration << " " << s.phone << "\n";
    start += duration;
  }
  return out.str();
}

}  // namespace gmmscore

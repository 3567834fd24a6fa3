// Kaldi's align-equal-compiled (EqualAlign in src/fstext/fstext-utils-inl.h): the first
// alignment of a flat start, before any model can align. A random path from the start state to a
// final state is drawn (each step an arc or, at a final state, the end, uniformly; self-loops
// never), again (up to 100 tries) while it has more emitting arcs than the utterance has frames;
// then the frames left over are spread as evenly as they go over the path's states that have an
// emitting self-loop, the first states of the path taking one more where they do not divide.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "model/align_graph.h"

namespace gmmscore {

// The transition-ids of such a path, one per frame (num_frames of them). The draws are Kaldi's
// (util/kaldi_random.h) after srand(seed): with seed = KaldiKeySeed(key), align-equal-compiled's
// path for that utterance. Errors: an empty graph, no path
// short enough after the tries, or none that can be lengthened (no self-loops).
absl::StatusOr<std::vector<int32_t>> EqualAlign(const AlignGraph& graph, int32_t num_frames,
                                                uint32_t seed);

}  // namespace gmmscore

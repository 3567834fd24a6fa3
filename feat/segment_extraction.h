// extract-segments's work: the segments of recordings, as Kaldi's extract-segments cuts them.
// Each line of the segments file is "SEGMENT RECORDING START END [CHANNEL]" (seconds; END -1:
// to the recording's end); a line that is malformed, names a recording the table lacks, starts
// past the recording's end, ends more than max_overshoot past it (less is cut to the end), is
// shorter than min_segment_length, or names a channel the recording lacks is skipped with a
// warning in Kaldi's words; a segment without a channel of a recording of several is an error.
// The ends become sample numbers by rounding (time x rate + 0.5, truncated) and each segment is
// written as a one-channel WAVE object (feat/wave_writer.h).
#pragma once

#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"

namespace gmmscore {

struct SegmentOptions {
  float min_segment_length = 0.1f;  // seconds
  float max_overshoot = 0.5f;       // seconds
};

struct SegmentSummary {
  int64_t lines = 0;    // in the segments file
  int64_t written = 0;  // segments written
};

// Reads recordings from wav_rspecifier (feat/wave_lookup.h) and the segments file from an
// rxfilename, writes the segments to wav_wspecifier (binary archives only), and calls warn(what)
// for each line skipped and each segment clipped.
absl::StatusOr<SegmentSummary> ExtractSegments(const std::string& wav_rspecifier,
                                               const std::string& segments_rxfilename,
                                               const std::string& wav_wspecifier,
                                               const SegmentOptions& options,
                                               absl::FunctionRef<void(const std::string&)> warn);

}  // namespace gmmscore

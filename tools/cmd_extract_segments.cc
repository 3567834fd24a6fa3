// Kaldi's extract-segments (run under that name): the segments a segments file names, cut from
// the recordings of a wav table and written as an archive of WAVE objects
// (feat/segment_extraction.h).
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "feat/segment_extraction.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "extract-segments";

}  // namespace

int RunExtractSegments(int argc, char** argv) {
  Args args(kProgram,
            "[options] <wav-rspecifier> <segments-file> <wav-wspecifier>\n"
            "Extract segments from a large audio file in WAV format.\n"
            "e.g. extract-segments scp:wav.scp segments ark:- | <some-other-program>\n"
            " segments-file format: each line is either\n"
            "<segment-id> <recording-id> <start-time> <end-time>\n"
            "e.g. call-861225-A-0050-0065 call-861225-A 5.0 6.5\n"
            "or (less frequently, and not supported in scripts):\n"
            "<segment-id> <wav-file-name> <start-time> <end-time> <channel>\n"
            "where <channel> will normally be 0 (left) or 1 (right)\n"
            "e.g. call-861225-A-0050-0065 call-861225 5.0 6.5 1\n"
            "And <end-time> of -1 means the segment runs till the end of the WAV file");
  SegmentOptions options;
  args.Register("min-segment-length", &options.min_segment_length,
                "Minimum segment length in seconds (reject shorter segments)")
      .Register("max-overshoot", &options.max_overshoot,
                "End segments overshooting audio by less than this (in seconds) are truncated, "
                "else rejected.");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 3) return Usage(args);
  auto summary = ExtractSegments(pos[0], pos[1], pos[2], options, [](const std::string& what) {
    KaldiLog(stderr, "WARNING", kProgram, what);
  });
  if (!summary.ok()) return Fail(kProgram, summary.status());
  KaldiLog(stderr, "LOG", kProgram,
           absl::StrCat("Successfully processed ", summary->written, " lines out of ",
                        summary->lines, " in the segments file. "));
  return 0;
}

}  // namespace gmmscore

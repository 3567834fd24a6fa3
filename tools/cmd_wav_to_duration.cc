// Kaldi's wav-to-duration (run under that name): each recording's duration in seconds, from its
// WAVE header (feat/wave_info.h) or, with --read-entire-file, from its samples
// (feat/wave_reader.h), as a table of floats (utils/data/get_utt2dur.sh writes utt2dur with it).
#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "feat/wave_info.h"
#include "feat/wave_reader.h"
#include "formats/kaldi_tables.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "wav-to-duration";

struct Durations {
  int64_t done = 0;
  double sum = 0, min = std::numeric_limits<float>::infinity(), max = 0;
  void Add(float seconds) {
    ++done;
    sum += seconds;
    min = std::min<double>(min, seconds);
    max = std::max<double>(max, seconds);
  }
};

// The next recording's duration; false at the end of the table.
using NextDuration = absl::FunctionRef<absl::StatusOr<bool>(std::string*, float*)>;

absl::StatusOr<Durations> WriteDurations(NextDuration next, FloatTableWriter& writer) {
  Durations durations;
  std::string key;
  float seconds = 0;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, next(&key, &seconds));
    if (!more) break;
    GMM_RETURN_IF_ERROR(writer.Write(key, seconds));
    durations.Add(seconds);
  }
  GMM_RETURN_IF_ERROR(writer.Close());
  return durations;
}

absl::StatusOr<Durations> FromHeaders(const std::string& rspecifier,
                                      const std::string& wspecifier) {
  // As Kaldi: the output opened first.
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<FloatTableWriter> writer,
                       FloatTableWriter::Open(wspecifier));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<WaveInfoTableReader> reader,
                       WaveInfoTableReader::Open(rspecifier));
  return WriteDurations(
      [&](std::string* key, float* seconds) -> absl::StatusOr<bool> {
        WaveInfo info;
        GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(key, &info));
        if (!more) return false;
        if (info.streamed()) {
          return absl::InvalidArgumentError(
              absl::StrCat("Error: member ", *key,
                           " has no duration in header. Check the source, "
                           "and/or try --read-entire-file."));
        }
        *seconds = info.duration();
        return true;
      },
      *writer);
}

absl::StatusOr<Durations> FromSamples(const std::string& rspecifier,
                                      const std::string& wspecifier) {
  // As Kaldi: the output opened first.
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<FloatTableWriter> writer,
                       FloatTableWriter::Open(wspecifier));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<WaveTableReader> reader, WaveTableReader::Open(rspecifier));
  return WriteDurations(
      [&](std::string* key, float* seconds) -> absl::StatusOr<bool> {
        WaveData wave;
        GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(key, &wave));
        if (!more) return false;
        *seconds = static_cast<float>(wave.num_samples()) / static_cast<float>(wave.sample_rate);
        return true;
      },
      *writer);
}

}  // namespace

int RunWavToDuration(int argc, char** argv) {
  Args args(kProgram,
            "[options...] <wav-rspecifier> <duration-wspecifier>\n"
            "Read wav files and output an archive consisting of a single float:\n"
            "the duration of each one in seconds.\n"
            "e.g.: wav-to-duration scp:wav.scp ark,t:-\n"
            "See also: wav-copy extract-segments feat-to-len");
  bool read_entire_file = false;
  args.Register("read-entire-file", &read_entire_file,
                "read the samples (not just the header) to ensure the returned duration is "
                "correct");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 2) return Usage(args);
  auto durations = read_entire_file ? FromSamples(pos[0], pos[1]) : FromHeaders(pos[0], pos[1]);
  if (!durations.ok()) return Fail(kProgram, durations.status());
  KaldiLog(stderr, "LOG", kProgram,
           absl::StrCat("Printed duration for ", durations->done, " audio files."));
  if (durations->done > 0) {
    KaldiLog(stderr, "LOG", kProgram,
             absl::StrCat("Mean duration was ",
                          KaldiNumber(durations->sum / static_cast<double>(durations->done)),
                          ", min and max durations were ", KaldiNumber(durations->min), ", ",
                          KaldiNumber(durations->max)));
  }
  return durations->done != 0 ? 0 : 1;
}

}  // namespace gmmscore

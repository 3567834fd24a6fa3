#include "feat/segment_extraction.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "feat/wave_lookup.h"
#include "feat/wave_writer.h"
#include "formats/kaldi_stream.h"
#include "formats/table_entries.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// A number as Kaldi's logs print it (an ostream's defaults).
template <typename T>
std::string Printed(T value) {
  std::ostringstream s;
  s << value;
  return s.str();
}

struct Segment {
  std::string id, recording;
  double start = 0, end = 0;
  int32_t channel = -1;  // -1: not given
};

// A line's fields, or nullopt with the warning that skips it.
std::optional<Segment> ParseSegment(const std::string& line, std::string* warning) {
  const std::vector<std::string> fields =
      absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
  if (fields.size() != 4 && fields.size() != 5) {
    *warning = "Invalid line in segments file: " + line;
    return std::nullopt;
  }
  Segment s{.id = fields[0], .recording = fields[1]};
  // Kaldi reads "nan" too, and then cuts at an undefined sample; here it is a bad time.
  if (!absl::SimpleAtod(fields[2], &s.start) || std::isnan(s.start)) {
    *warning = "Invalid line in segments file [bad start]: " + line;
    return std::nullopt;
  }
  if (!absl::SimpleAtod(fields[3], &s.end) || std::isnan(s.end)) {
    *warning = "Invalid line in segments file [bad end]: " + line;
    return std::nullopt;
  }
  if (s.start < 0 || (s.end != -1.0 && s.end <= 0) || (s.start >= s.end && s.end > 0)) {
    *warning = "Invalid line in segments file [empty or invalid segment]: " + line;
    return std::nullopt;
  }
  if (fields.size() == 5 && (!absl::SimpleAtoi(fields[4], &s.channel) || s.channel < 0)) {
    *warning = "Invalid line in segments file [bad channel]: " + line;
    return std::nullopt;
  }
  return s;
}

// The segment's samples of its recording, or nullopt with the warning that skips it; an error
// where the recording has several channels and the line names none.
absl::StatusOr<std::optional<WaveData>> Cut(const std::string& line, Segment segment,
                                            const WaveData& wave, const SegmentOptions& options,
                                            std::string* warning) {
  const float rate = static_cast<float>(wave.sample_rate);
  const int32_t num_samples = static_cast<int32_t>(wave.num_samples());
  const int32_t num_channels = static_cast<int32_t>(wave.channels.size());
  const float length = static_cast<float>(num_samples) / rate;
  if (segment.start > length) {
    *warning = absl::StrCat("Segment start is out of file data range [0, ", Printed(length),
                            "s]; skipping segment '", line, "'");
    return std::nullopt;
  }
  if (segment.end > length + options.max_overshoot) {
    *warning = absl::StrCat("Segment end is too far out of file data range [0,", Printed(length),
                            "s]; skipping segment '", line, "'");
    return std::nullopt;
  }
  if (segment.end < 0 || segment.end > length) segment.end = length;
  if (segment.end - segment.start < options.min_segment_length) {
    *warning = absl::StrCat("Segment ", segment.id, " too short, skipping it.");
    return std::nullopt;
  }
  if (segment.channel == -1) {
    if (num_channels != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Your data has multiple channels. You must specify the channel in the segments file. "
          "Skipping segment ",
          segment.id));
    }
    segment.channel = 0;
  } else if (segment.channel >= num_channels) {
    *warning = absl::StrCat("Invalid channel ", segment.channel, " >= ", num_channels,
                            ". Skipping segment ", segment.id);
    return std::nullopt;
  }
  const int32_t first = std::min(static_cast<int32_t>(segment.start * rate + 0.5f), num_samples);
  const int32_t end =
      std::clamp(static_cast<int32_t>(segment.end * rate + 0.5f), first, num_samples);
  const std::vector<float>& samples = wave.channels[size_t(segment.channel)];
  WaveData cut;
  cut.sample_rate = wave.sample_rate;
  cut.channels.emplace_back(samples.begin() + first, samples.begin() + end);
  return cut;
}

}  // namespace

absl::StatusOr<SegmentSummary> ExtractSegments(const std::string& wav_rspecifier,
                                               const std::string& segments_rxfilename,
                                               const std::string& wav_wspecifier,
                                               const SegmentOptions& options,
                                               absl::FunctionRef<void(const std::string&)> warn) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<WaveLookup> recordings, WaveLookup::Open(wav_rspecifier));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryWriter> writer,
                       TableEntryWriter::Open(wav_wspecifier));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> segments,
                       InputStream::Open(segments_rxfilename));
  SegmentSummary summary;
  std::string line;
  while (std::getline(segments->stream(), line)) {
    ++summary.lines;
    std::string warning;
    const std::optional<Segment> segment = ParseSegment(line, &warning);
    if (!segment.has_value()) {
      warn(warning);
      continue;
    }
    GMM_ASSIGN_OR_RETURN(const WaveData* wave, recordings->Find(segment->recording));
    if (wave == nullptr) {
      warn(absl::StrCat("Could not find recording ", segment->recording, ", skipping segment ",
                        segment->id));
      continue;
    }
    GMM_ASSIGN_OR_RETURN(const std::optional<WaveData> cut,
                         Cut(line, *segment, *wave, options, &warning));
    if (!cut.has_value()) {
      warn(warning);
      continue;
    }
    bool text = false;
    int64_t clipped = 0;
    GMM_RETURN_IF_ERROR(writer->Write(segment->id, [&](std::ostream& os, bool binary) {
      text = !binary;
      if (binary) clipped = WriteWave(*cut, os);
    }));
    if (text) {
      return absl::InvalidArgumentError("Wave data can only be written in binary mode.");
    }
    if (clipped > 0) {
      warn(absl::StrCat("WARNING: clipped ", clipped, " samples out of total ", cut->num_samples(),
                        ". Reduce volume?"));
    }
    ++summary.written;
  }
  GMM_RETURN_IF_ERROR(segments->Close());
  GMM_RETURN_IF_ERROR(writer->Close());
  return summary;
}

}  // namespace gmmscore

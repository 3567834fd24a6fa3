#include "tools/stream_table.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <future>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// What one utterance sends: features, or (audio streams) 16-bit samples.
struct Utterance {
  Matrix feats;
  std::vector<int16_t> audio;
};

// One utterance through one stream; the scores of its windows, in order.
absl::StatusOr<Matrix> ScoreUtterance(const std::shared_ptr<grpc::Channel>& channel,
                                      v1::StreamConfig config, const Utterance& utterance,
                                      int32_t chunk_frames) {
  const Matrix& feats = utterance.feats;
  if (!config.has_audio()) config.set_dim(feats.cols);
  Matrix scores;
  client::ScoreStream::Options options;
  options.chunk_frames = chunk_frames;
  options.keep_scores = false;
  options.on_window = [&scores](const client::ScoreWindow& w) {
    scores.cols = w.scores.cols;
    scores.rows += w.scores.rows;
    scores.data.insert(scores.data.end(), w.scores.data.begin(), w.scores.data.end());
  };
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<client::ScoreStream> stream,
                       client::ScoreStream::Open(channel, config, std::move(options)));
  GMM_RETURN_IF_ERROR(config.has_audio() ? stream->PushAudio(utterance.audio.data(),
                                                             int64_t(utterance.audio.size()))
                                         : stream->Push(feats));
  GMM_RETURN_IF_ERROR(stream->End());
  GMM_RETURN_IF_ERROR(stream->Finish());
  if (!config.has_audio() && scores.rows != feats.rows) {
    return absl::DataLossError(
        absl::StrCat(feats.rows, " frames sent, scores for ", scores.rows, " received"));
  }
  return scores;
}

// The next utterance of input into *utterance and *config (its sample rate, for audio); false at
// the end.
absl::StatusOr<bool> NextUtterance(StreamTableInput input, std::string* key, Utterance* utterance,
                                   v1::StreamConfig* config) {
  if (input.features != nullptr) return input.features->Next(key, &utterance->feats);
  WaveData wave;
  GMM_ASSIGN_OR_RETURN(const bool more, input.waves->Next(key, &wave));
  if (!more) return false;
  config->mutable_audio()->set_sample_rate_hz(int32_t(wave.sample_rate));
  utterance->audio.reserve(wave.channels[0].size());
  for (float v : wave.channels[0]) {
    utterance->audio.push_back(int16_t(std::clamp(std::lround(v), -32768L, 32767L)));
  }
  return true;
}

}  // namespace

absl::StatusOr<StreamTableSummary> StreamTable(const std::shared_ptr<grpc::Channel>& channel,
                                               const v1::StreamConfig& config,
                                               const StreamTableOptions& options,
                                               StreamTableInput input, MatrixTableWriter* writer,
                                               std::FILE* progress) {
  const Clock::time_point start = Clock::now();
  Clock::time_point last_progress = start;
  const bool tty = progress != nullptr && isatty(fileno(progress));
  StreamTableSummary summary;
  struct InFlight {
    std::string key;
    std::future<absl::StatusOr<Matrix>> scores;
  };
  std::deque<InFlight> in_flight;
  // Writes the oldest utterance once its stream is done (keeping the input order).
  auto write_oldest = [&]() -> absl::Status {
    InFlight done = std::move(in_flight.front());
    in_flight.pop_front();
    absl::StatusOr<Matrix> scores = done.scores.get();
    if (!scores.ok()) {
      return absl::Status(scores.status().code(),
                          absl::StrCat("utterance ", done.key, ": ", scores.status().message()));
    }
    GMM_RETURN_IF_ERROR(writer->Write(done.key, *scores));
    ++summary.utterances;
    summary.frames += scores->rows;
    if (progress != nullptr && Seconds(last_progress) >= 2.0) {
      last_progress = Clock::now();
      const double t = Seconds(start);
      std::fprintf(progress, "%sstreamed %lld utterances, %lld frames, %.1f s, %.0f frames/s%s",
                   tty ? "\r" : "", static_cast<long long>(summary.utterances),
                   static_cast<long long>(summary.frames), t, double(summary.frames) / t,
                   tty ? "" : "\n");
    }
    return absl::OkStatus();
  };
  std::string key;
  while (true) {
    Utterance utterance;
    v1::StreamConfig utterance_config = config;
    GMM_ASSIGN_OR_RETURN(const bool more,
                         NextUtterance(input, &key, &utterance, &utterance_config));
    if (!more) break;
    utterance_config.set_stream_id(key);
    in_flight.push_back(
        {key, std::async(std::launch::async, ScoreUtterance, channel, std::move(utterance_config),
                         std::move(utterance), options.chunk_frames)});
    if (int32_t(in_flight.size()) >= options.parallel) GMM_RETURN_IF_ERROR(write_oldest());
  }
  while (!in_flight.empty()) GMM_RETURN_IF_ERROR(write_oldest());
  summary.seconds = Seconds(start);
  if (tty && summary.seconds >= 2.0) std::fputc('\n', progress);
  return summary;
}

}  // namespace gmmscore

// gmmscore stream: `gmmscore score` through a gmmscored. Each utterance is one Score stream
// (FLOAT32), several in flight at once; the archive is written in input order, so the output is
// the same bytes `gmmscore score` writes for the same models and features.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <future>
#include <memory>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/scorer_client.h"
#include "feat/wave_reader.h"
#include "formats/matrix_table.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "loadgen/stream_options.h"

namespace gmmscore {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

v1::StreamConfig::Fusion ToProto(FusionRule rule) {
  switch (rule) {
    case FusionRule::kLogLinear:
      return v1::StreamConfig::LOG_LINEAR;
    case FusionRule::kLogAdd:
      return v1::StreamConfig::LOG_ADD;
    case FusionRule::kSelectBest:
      return v1::StreamConfig::SELECT;
    case FusionRule::kMax:
      break;
  }
  return v1::StreamConfig::MAX;
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
  auto stream = client::ScoreStream::Open(channel, config, std::move(options));
  if (!stream.ok()) return stream.status();
  absl::Status s = config.has_audio() ? (*stream)->PushAudio(utterance.audio.data(),
                                                             int64_t(utterance.audio.size()))
                                      : (*stream)->Push(feats);
  if (s.ok()) s = (*stream)->End();
  if (s.ok()) s = (*stream)->Finish();
  if (!s.ok()) return s;
  if (!config.has_audio() && scores.rows != feats.rows) {
    return absl::DataLossError(
        absl::StrCat(feats.rows, " frames sent, scores for ", scores.rows, " received"));
  }
  return scores;
}

}  // namespace

int RunStream(int argc, char** argv) {
  Args args("stream",
            "--server HOST:PORT --model NAME (--feats RSPEC | --wav RSPEC --front-end NAME) "
            "--out WSPEC [options]");
  std::string feats, wav, front_end, out;
  FusionOptions fusion_options;
  int32_t window = 100, chunk = 100, parallel = 4;
  bool quiet = false;
  AddChannelOptions(args);
  args.Add({"model", "NAME", "model name on the server; several are fused", "", true})
      .Register("feats", &feats, "features: ark:F, ark,t:F, scp:F, htk:F, sphinx:F, ...")
      .Register("wav", &wav,
                "audio instead of features (scp:wav.scp, ark:F; first channel as 16-bit samples): "
                "the server computes the features")
      .Register("front-end", &front_end,
                "with --wav: the server's front end (gmmscored --front-end)")
      .Register("out", &out, "scores (frames x states): ark:F, ark,t:F, ark,scp:F,S, ark:-");
  AddFusionOptions(args, &fusion_options);
  args.Register("window", &window, "frames per response window; 0: the server's default")
      .Register("chunk-frames", &chunk, "frames per message sent")
      .Register("parallel", &parallel, "utterances streamed at once")
      .Register("quiet", &quiet, "no progress or summary on stderr");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string> models = args.GetAll("model");
  if (models.empty() || feats.empty() == wav.empty() || out.empty() ||
      wav.empty() != front_end.empty()) {
    std::fprintf(stderr,
                 "gmmscore stream: --server, --model, --out and --feats (or --wav and "
                 "--front-end) are required\n%s",
                 args.Help().c_str());
    return 2;
  }
  auto fusion = FusionFromOptions(fusion_options);
  if (!fusion.ok()) return Fail("stream", fusion.status());
  if (chunk < 1 || parallel < 1 || window < 0) {
    return Fail("stream", absl::InvalidArgumentError(
                              "--chunk-frames and --parallel must be >= 1, --window >= 0"));
  }
  v1::StreamConfig config;
  for (const std::string& m : models) config.add_models(m);
  config.set_fusion(ToProto(fusion->rule));
  config.set_select_window(fusion->select_window);
  config.set_window_frames(window);
  for (float w : fusion->weights) config.add_weights(w);
  auto channel = ChannelFromArgs(args);
  if (!channel.ok()) return Fail("stream", channel.status());
  std::unique_ptr<MatrixTableReader> features;
  std::unique_ptr<WaveTableReader> waves;
  if (!feats.empty()) {
    auto reader = MatrixTableReader::Open(feats);
    if (!reader.ok()) return Fail("stream", reader.status());
    features = std::move(*reader);
  } else {
    auto reader = WaveTableReader::Open(wav);
    if (!reader.ok()) return Fail("stream", reader.status());
    waves = std::move(*reader);
    config.mutable_audio()->set_front_end(front_end);
  }
  auto writer = MatrixTableWriter::Open(out);
  if (!writer.ok()) return Fail("stream", writer.status());

  const Clock::time_point start = Clock::now();
  Clock::time_point last_progress = start;
  int64_t utterances = 0, frames = 0;
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
    if (absl::Status s = (*writer)->Write(done.key, *scores); !s.ok()) return s;
    ++utterances;
    frames += scores->rows;
    if (!quiet && Seconds(last_progress) >= 2.0) {
      last_progress = Clock::now();
      const double t = Seconds(start);
      std::fprintf(stderr, "%sstreamed %lld utterances, %lld frames, %.1f s, %.0f frames/s%s",
                   isatty(2) ? "\r" : "", static_cast<long long>(utterances),
                   static_cast<long long>(frames), t, double(frames) / t, isatty(2) ? "" : "\n");
    }
    return absl::OkStatus();
  };
  std::string key;
  while (true) {
    Utterance utterance;
    v1::StreamConfig utterance_config = config;
    if (features) {
      auto more = features->Next(&key, &utterance.feats);
      if (!more.ok()) return Fail("stream", more.status());
      if (!*more) break;
    } else {
      WaveData wave;
      auto more = waves->Next(&key, &wave);
      if (!more.ok()) return Fail("stream", more.status());
      if (!*more) break;
      utterance_config.mutable_audio()->set_sample_rate_hz(int32_t(wave.sample_rate));
      utterance.audio.reserve(wave.channels[0].size());
      for (float v : wave.channels[0]) {
        utterance.audio.push_back(int16_t(std::clamp(std::lround(v), -32768L, 32767L)));
      }
    }
    utterance_config.set_stream_id(key);
    in_flight.push_back(
        {key, std::async(std::launch::async, ScoreUtterance, *channel, std::move(utterance_config),
                         std::move(utterance), chunk)});
    if (int32_t(in_flight.size()) >= parallel) {
      if (absl::Status s = write_oldest(); !s.ok()) return Fail("stream", s);
    }
  }
  while (!in_flight.empty()) {
    if (absl::Status s = write_oldest(); !s.ok()) return Fail("stream", s);
  }
  if (absl::Status s = (*writer)->Close(); !s.ok()) return Fail("stream", s);
  if (!quiet) {
    const double t = Seconds(start);
    if (isatty(2) && Seconds(start) >= 2.0) std::fputc('\n', stderr);
    std::fprintf(stderr,
                 "gmmscore stream: %lld utterances, %lld frames through %s -> %s\n"
                 "  %.3f s, real-time factor %.4f\n",
                 static_cast<long long>(utterances), static_cast<long long>(frames),
                 args.Get("server").c_str(), (*writer)->description().c_str(), t,
                 frames > 0 ? t / (double(frames) / 100.0) : 0.0);
  }
  return 0;
}

}  // namespace gmmscore

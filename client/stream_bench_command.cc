// gmmscore bench-stream: a load generator for gmmscored. N streams, each paced at real time
// (100 frames/s) in chunks of C frames, for a given time; reports the streams that kept up, the
// frames/s scored, and the window latency percentiles, measured from the moment the chunk
// holding a window's last frame was handed to gRPC to the moment its scores arrived.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/command_util.h"
#include "client/commands.h"
#include "client/scorer_client.h"
#include "client/stream_options.h"
#include "tests/random_model.h"

namespace gmmscore {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kFramesPerSecond = 100.0;

struct StreamResult {
  absl::Status status;
  int64_t frames_scored = 0;
  double worst_send_lag_s = 0;      // how far behind its real-time schedule the sender fell
  std::vector<double> latencies_s;  // windows after the warm-up
};

struct BenchOptions {
  v1::StreamConfig config;
  int32_t chunk_frames = 10;
  int64_t frames_per_stream = 0;
  double warmup_s = 0;
};

void RunOneStream(const std::shared_ptr<grpc::Channel>& channel, const BenchOptions& o,
                  const Matrix& pool, Clock::time_point start, StreamResult* result) {
  const int64_t chunks = (o.frames_per_stream + o.chunk_frames - 1) / o.chunk_frames;
  // When each chunk was handed to gRPC, in ns since start (read by the reader thread).
  std::vector<std::atomic<int64_t>> sent_ns(static_cast<size_t>(chunks));
  std::mutex mu;
  client::ScoreStream::Options options;
  options.chunk_frames = o.chunk_frames;
  options.keep_scores = false;
  options.on_window = [&](const client::ScoreWindow& w) {
    const int64_t now_ns = (Clock::now() - start).count();
    const int64_t last = w.first_frame + w.scores.rows - 1;
    const double latency = double(now_ns - sent_ns[size_t(last / o.chunk_frames)].load()) * 1e-9;
    std::lock_guard lock(mu);
    result->frames_scored += w.scores.rows;
    if (double(now_ns) * 1e-9 >= o.warmup_s) result->latencies_s.push_back(latency);
  };
  auto stream = client::ScoreStream::Open(channel, o.config, std::move(options));
  if (!stream.ok()) {
    result->status = stream.status();
    return;
  }
  const auto period = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(o.chunk_frames / kFramesPerSecond));
  for (int64_t c = 0; c < chunks && result->status.ok(); ++c) {
    const Clock::time_point due = start + c * period;
    std::this_thread::sleep_until(due);
    const Clock::time_point now = Clock::now();
    result->worst_send_lag_s =
        std::max(result->worst_send_lag_s, std::chrono::duration<double>(now - due).count());
    const int64_t first = c * o.chunk_frames;
    const int32_t n = int32_t(std::min<int64_t>(o.chunk_frames, o.frames_per_stream - first));
    const int32_t at = int32_t(first % (pool.rows - o.chunk_frames));
    sent_ns[size_t(c)] = (now - start).count();
    result->status = (*stream)->Push(pool.row(at), n);
  }
  if (result->status.ok()) result->status = (*stream)->End();
  if (result->status.ok()) result->status = (*stream)->Finish();
}

double Percentile(std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0.0;
  const size_t i = std::min(sorted.size() - 1, size_t(p / 100.0 * double(sorted.size())));
  return sorted[i];
}

}  // namespace

int RunBenchStream(int argc, char** argv) {
  Args args("bench-stream", "--server HOST:PORT --model NAME [--streams N] [options]");
  AddChannelOptions(args);
  args.Add({"model", "NAME", "model name on the server"})
      .Add({"streams", "N", "concurrent streams", "64"})
      .Add({"chunk-frames", "C", "frames per message; one every C x 10 ms per stream", "10"})
      .Add({"window", "W", "frames per response window", "10"})
      .Add({"seconds", "S", "audio seconds per stream", "20"})
      .Add({"warmup-seconds", "S", "windows in the first S seconds are not measured", "2"})
      .Add({"max-lag-ms", "MS",
            "a stream keeps real time if its sender never fell further "
            "behind schedule than this",
            "100"});
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  if (!args.Has("model"))
    return Fail("bench-stream", absl::InvalidArgumentError("--model is required"));
  auto streams = args.GetInt("streams"), chunk = args.GetInt("chunk-frames"),
       window = args.GetInt("window");
  auto seconds = args.GetDouble("seconds"), warmup = args.GetDouble("warmup-seconds"),
       max_lag_ms = args.GetDouble("max-lag-ms");
  for (const absl::Status& s : {streams.status(), chunk.status(), window.status(), seconds.status(),
                                warmup.status(), max_lag_ms.status()}) {
    if (!s.ok()) return Fail("bench-stream", s);
  }
  if (*streams < 1 || *chunk < 1 || *window < 1 || *seconds <= 0) {
    return Fail("bench-stream", absl::InvalidArgumentError(
                                    "--streams, --chunk-frames, --window, --seconds must be > 0"));
  }
  auto channel = ChannelFromArgs(args);
  if (!channel.ok()) return Fail("bench-stream", channel.status());
  auto info = client::AdminClient(*channel).Get(args.Get("model"));
  if (!info.ok()) return Fail("bench-stream", info.status());

  BenchOptions o;
  o.config.add_models(args.Get("model"));
  o.config.set_dim(info->dim());
  o.config.set_window_frames(*window);
  o.chunk_frames = *chunk;
  o.frames_per_stream = int64_t(*seconds * kFramesPerSecond);
  o.warmup_s = *warmup;
  const Matrix pool =
      testing::RandomFeatures(std::max(1000, 2 * *chunk), info->dim(), 0.0f, 3.0f, 1);

  std::fprintf(stderr,
               "gmmscore bench-stream: %d streams x %.0f s at %.0f frames/s, chunks of %d frames, "
               "window %d, model %s (%d states x %lld Gaussians x %d dims) on %s\n",
               *streams, *seconds, kFramesPerSecond, *chunk, *window, info->name().c_str(),
               info->num_states(), static_cast<long long>(info->num_gaussians()), info->dim(),
               args.Get("server").c_str());
  std::vector<StreamResult> results(static_cast<size_t>(*streams));
  std::vector<std::thread> threads;
  const Clock::time_point start = Clock::now();
  // Streams start spread over one chunk period, as independent real-time sources would.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> phase(0.0, *chunk / kFramesPerSecond);
  for (int i = 0; i < *streams; ++i) {
    o.config.set_stream_id(absl::StrCat("bench-", i));
    const auto offset =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(phase(rng)));
    threads.emplace_back(RunOneStream, *channel, o, std::cref(pool), start + offset,
                         &results[size_t(i)]);
  }
  for (std::thread& t : threads) t.join();
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();

  int ok = 0, kept_up = 0;
  int64_t frames = 0;
  std::vector<double> latencies;
  absl::Status first_error;
  for (const StreamResult& r : results) {
    frames += r.frames_scored;
    latencies.insert(latencies.end(), r.latencies_s.begin(), r.latencies_s.end());
    if (!r.status.ok()) {
      if (first_error.ok()) first_error = r.status;
      continue;
    }
    ++ok;
    if (r.worst_send_lag_s * 1000.0 <= *max_lag_ms) ++kept_up;
  }
  std::sort(latencies.begin(), latencies.end());
  std::printf("streams: %d of %d finished OK, %d kept real time (sender never > %.0f ms late)\n",
              ok, *streams, kept_up, *max_lag_ms);
  std::printf("frames:  %lld scored in %.1f s, %.0f frames/s (%.1fx real time)\n",
              static_cast<long long>(frames), wall, double(frames) / wall,
              double(frames) / wall / kFramesPerSecond);
  std::printf(
      "window latency (last frame sent -> scores received), %zu windows after %.0f s: "
      "p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms\n",
      latencies.size(), *warmup, 1e3 * Percentile(latencies, 50), 1e3 * Percentile(latencies, 95),
      1e3 * Percentile(latencies, 99), latencies.empty() ? 0.0 : 1e3 * latencies.back());
  if (!first_error.ok()) return Fail("bench-stream", first_error);
  return 0;
}

}  // namespace gmmscore

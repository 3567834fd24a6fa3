#include "loadgen/bench_result.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <utility>

namespace gmmscore {
namespace {

bool WriteAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= size_t(w);
  }
  return true;
}
bool ReadAll(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= size_t(r);
  }
  return true;
}
template <typename T>
bool WriteVector(int fd, const std::vector<T>& v) {
  const uint64_t n = v.size();
  return WriteAll(fd, &n, sizeof n) && WriteAll(fd, v.data(), n * sizeof(T));
}
template <typename T>
bool ReadVector(int fd, std::vector<T>* v) {
  uint64_t n = 0;
  if (!ReadAll(fd, &n, sizeof n) || n > (uint64_t(1) << 32)) return false;
  v->resize(size_t(n));
  return ReadAll(fd, v->data(), size_t(n) * sizeof(T));
}
double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0.0;
  const size_t i = std::min(sorted.size() - 1, size_t(p / 100.0 * double(sorted.size())));
  return sorted[i];
}

}  // namespace

void BenchResult::Add(BenchResult&& other) {
  ok += other.ok;
  kept_up += other.kept_up;
  frames += other.frames;
  wall_s = std::max(wall_s, other.wall_s);
  cpu_s += other.cpu_s;
  latencies.insert(latencies.end(), other.latencies.begin(), other.latencies.end());
  lags.insert(lags.end(), other.lags.begin(), other.lags.end());
  writes.insert(writes.end(), other.writes.begin(), other.writes.end());
  if (first_error.empty()) first_error = std::move(other.first_error);
}

bool WriteBenchResult(int fd, const BenchResult& r) {
  const std::vector<char> error(r.first_error.begin(), r.first_error.end());
  return WriteAll(fd, &r.ok, sizeof r.ok) && WriteAll(fd, &r.kept_up, sizeof r.kept_up) &&
         WriteAll(fd, &r.frames, sizeof r.frames) && WriteAll(fd, &r.wall_s, sizeof r.wall_s) &&
         WriteAll(fd, &r.cpu_s, sizeof r.cpu_s) && WriteVector(fd, r.latencies) &&
         WriteVector(fd, r.lags) && WriteVector(fd, r.writes) && WriteVector(fd, error);
}
bool ReadBenchResult(int fd, BenchResult* r) {
  std::vector<char> error;
  if (!(ReadAll(fd, &r->ok, sizeof r->ok) && ReadAll(fd, &r->kept_up, sizeof r->kept_up) &&
        ReadAll(fd, &r->frames, sizeof r->frames) && ReadAll(fd, &r->wall_s, sizeof r->wall_s) &&
        ReadAll(fd, &r->cpu_s, sizeof r->cpu_s) && ReadVector(fd, &r->latencies) &&
        ReadVector(fd, &r->lags) && ReadVector(fd, &r->writes) && ReadVector(fd, &error))) {
    return false;
  }
  r->first_error.assign(error.begin(), error.end());
  return true;
}

int PrintBenchReport(BenchResult r, const BenchReportContext& context) {
  const int32_t streams = context.streams, processes = context.processes;
  const double warmup_s = context.warmup_s, max_lag_ms = context.max_lag_ms;
  const double daemon_cpu_s = context.daemon_cpu_s;
  std::sort(r.latencies.begin(), r.latencies.end());
  std::sort(r.lags.begin(), r.lags.end());
  std::sort(r.writes.begin(), r.writes.end());
  const double wall = r.wall_s > 0 ? r.wall_s : 1e-9;
  std::printf("streams: %d of %d finished OK, %d kept real time (sender never > %.0f ms late)\n",
              r.ok, streams, r.kept_up, max_lag_ms);
  std::printf("frames:  %lld scored in %.1f s, %.0f frames/s (%.1fx real time)\n",
              static_cast<long long>(r.frames), wall, double(r.frames) / wall,
              double(r.frames) / wall / kBenchFramesPerSecond);
  std::printf(
      "window latency (last frame sent -> scores received), %zu windows after %.0f s: "
      "p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms\n",
      r.latencies.size(), warmup_s, 1e3 * Percentile(r.latencies, 50),
      1e3 * Percentile(r.latencies, 95), 1e3 * Percentile(r.latencies, 99),
      r.latencies.empty() ? 0.0 : 1e3 * r.latencies.back());
  // Who was the limit: a load generator near its cores' worth of CPU, or senders late while the
  // server idles, means the measurement, not the server, stopped first.
  std::printf(
      "load generator: %.2f CPU cores (%.1f s CPU over %.1f s, %d process%s); senders' worst "
      "lateness per stream: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
      r.cpu_s / wall, r.cpu_s, wall, processes, processes > 1 ? "es" : "",
      1e3 * Percentile(r.lags, 50), 1e3 * Percentile(r.lags, 99),
      r.lags.empty() ? 0.0 : 1e3 * r.lags.back());
  // A chunk's write completes once gRPC has sent it: slow writes with an idle server point at
  // the transport between the two processes, not at scoring.
  std::printf(
      "client writes (chunk handed to gRPC -> write done), %zu chunks after %.0f s: p50 "
      "%.2f ms, p99 %.2f ms, max %.1f ms\n",
      r.writes.size(), warmup_s, 1e3 * Percentile(r.writes, 50), 1e3 * Percentile(r.writes, 99),
      r.writes.empty() ? 0.0 : 1e3 * r.writes.back());
  if (daemon_cpu_s >= 0) {
    const double stream_seconds = double(r.frames) / kBenchFramesPerSecond;
    std::printf("server: %.2f CPU cores, %.3f ms of CPU per stream-second\n", daemon_cpu_s / wall,
                stream_seconds > 0 ? 1e3 * daemon_cpu_s / stream_seconds : 0.0);
  }
  if (!r.first_error.empty()) {
    std::fprintf(stderr, "gmmscore bench-stream: %s\n", r.first_error.c_str());
    return 1;
  }
  return 0;
}

}  // namespace gmmscore

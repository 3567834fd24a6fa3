// What bench-stream's streams measured, added up over the load generator's processes (a child
// sends its own through a pipe), and the report printed from it (docs/PERFORMANCE.md quotes it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gmmscore {

inline constexpr double kBenchFramesPerSecond = 100.0;  // real time: 10 ms frames

struct BenchResult {
  int32_t ok = 0;       // streams that finished without an error
  int32_t kept_up = 0;  // of those, streams whose sender was never later than --max-lag-ms
  int64_t frames = 0;   // scored
  double wall_s = 0;    // the longest run's
  double cpu_s = 0;     // the load generator's own
  std::vector<double> latencies;  // per window after the warm-up: last frame sent -> scores
  std::vector<double> lags;       // per stream, its worst
  std::vector<double> writes;     // per chunk after the warm-up: handed to gRPC -> written
  std::string first_error;        // empty: none

  void Add(BenchResult&& other);
};

// A child process's result through a pipe to its parent (same machine: native byte order). False
// where the pipe broke or what came is not a result.
bool WriteBenchResult(int fd, const BenchResult& result);
bool ReadBenchResult(int fd, BenchResult* result);

// What the report says about the run besides the result.
struct BenchReportContext {
  int32_t streams = 0;
  int32_t processes = 1;
  double warmup_s = 0;
  double max_lag_ms = 0;
  double daemon_cpu_s = -1;  // < 0: the daemon was not watched
};

// Prints the report to stdout (the first error to stderr); 1 where a stream or call failed.
int PrintBenchReport(BenchResult result, const BenchReportContext& context);

}  // namespace gmmscore

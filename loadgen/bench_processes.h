// bench-stream over several processes, so that the load generator is not the limit: the streams
// are shared out over children forked before any gRPC object exists, each runs its share as a
// process of one would and sends its BenchResult back through a pipe, and the parent adds them up.
#pragma once

#include <cstdint>
#include <variant>

#include "absl/status/statusor.h"
#include "loadgen/bench_result.h"

namespace gmmscore {

// One process's share of the streams.
struct BenchShare {
  int32_t first_stream = 0;
  int32_t num_streams = 0;
  int result_fd = -1;  // a child's pipe to its parent; -1 in a process of one
};

// With one process: all streams, as this process's share. With several: in each child, its
// share; in the parent, once every child has ended, their results added up (cpu_s their CPU;
// first_error also where children ended without a result). Errors where a pipe or fork fails.
absl::StatusOr<std::variant<BenchShare, BenchResult>> ShareOutStreams(int32_t streams,
                                                                      int32_t processes);

// A child's end: sends result to its parent and exits, 0 where it was sent, without running
// static destructors under gRPC's threads.
[[noreturn]] void EndShare(const BenchShare& share, const BenchResult& result);

}  // namespace gmmscore

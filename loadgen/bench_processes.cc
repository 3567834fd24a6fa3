#include "loadgen/bench_processes.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "loadgen/cpu_time.h"

namespace gmmscore {

absl::StatusOr<std::variant<BenchShare, BenchResult>> ShareOutStreams(int32_t streams,
                                                                      int32_t processes) {
  if (processes <= 1) return BenchShare{0, streams, -1};
  std::vector<std::pair<pid_t, int>> children;  // pid, read end
  for (int32_t i = 0; i < processes; ++i) {
    int fds[2];
    if (pipe(fds) != 0) return absl::InternalError("pipe failed");
    const int32_t begin = int32_t(int64_t(streams) * i / processes);
    const int32_t end = int32_t(int64_t(streams) * (i + 1) / processes);
    std::fflush(nullptr);
    const pid_t child = fork();
    if (child < 0) return absl::InternalError("fork failed");
    if (child == 0) {
      close(fds[0]);
      for (const auto& [pid, fd] : children) close(fd);
      return BenchShare{begin, end - begin, fds[1]};
    }
    close(fds[1]);
    children.emplace_back(child, fds[0]);
  }
  BenchResult total;
  bool all_reported = true;
  for (const auto& [pid, fd] : children) {
    BenchResult one;
    all_reported = ReadBenchResult(fd, &one) && all_reported;
    close(fd);
    total.Add(std::move(one));
  }
  int failed = 0;
  for (const auto& [pid, fd] : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  total.cpu_s = ChildrenCpuSeconds();
  if (!all_reported && total.first_error.empty()) {
    total.first_error = absl::StrCat(failed, " of ", processes,
                                     " load generator processes failed without a result");
  }
  return total;
}

void EndShare(const BenchShare& share, const BenchResult& result) {
  const bool sent = WriteBenchResult(share.result_fd, result);
  close(share.result_fd);
  std::fflush(nullptr);
  _exit(sent ? 0 : 1);
}

}  // namespace gmmscore

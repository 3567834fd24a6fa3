// gmmscore sum-accs: Kaldi's gmm-sum-accs: the sum of accumulator files (from jobs, GPUs or
// machines), written as one; the same arguments, options and log lines.
#include <cstdio>
#include <string>
#include <vector>

#include "formats/kaldi_accs.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"

namespace gmmscore {

int RunSumAccs(int argc, char** argv) {
  Args args("sum-accs",
            "[options] STATS-OUT STATS-IN1 STATS-IN2 ...\n"
            "Sums accumulator files for GMM training (Kaldi's gmm-sum-accs).\n"
            "e.g.: gmmscore sum-accs 1.acc 1.1.acc 1.2.acc");
  bool binary = true;
  args.Register("binary", &binary, "write output in binary mode");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() < 2) return Usage(args);
  ModelStats sum;
  for (size_t i = 1; i < pos.size(); ++i) {
    auto stats = ReadModelStatsFile(pos[i]);
    if (!stats.ok()) return Fail("sum-accs", stats.status());
    if (i == 1) {
      sum = *std::move(stats);
    } else if (absl::Status s = sum.Add(*stats); !s.ok()) {
      return Fail("sum-accs", absl::InvalidArgumentError(pos[i] + ": " + std::string(s.message())));
    }
  }
  if (absl::Status s = WriteModelStatsFile(sum, pos[0], binary); !s.ok()) {
    return Fail("sum-accs", s);
  }
  const std::string program = "gmmscore sum-accs";
  KaldiLog(stderr, "LOG", program,
           "Summed " + KaldiNumber(pos.size() - 1) + " stats, total count " +
               KaldiNumber(sum.gmm.total_frames) + ", avg like/frame " +
               KaldiNumber(sum.gmm.total_log_like / sum.gmm.total_frames));
  KaldiLog(stderr, "LOG", program,
           "Total count of stats is " + KaldiNumber(sum.gmm.TotalOccupancy()));
  KaldiLog(stderr, "LOG", program, "Written stats to " + pos[0]);
  return 0;
}

}  // namespace gmmscore

// gmmscore: the command-line tool. One binary, subcommands (docs/ARCHITECTURE.md).
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "absl/synchronization/mutex.h"
#include "tools/commands.h"

namespace {

constexpr char kUsage[] =
    "usage: gmmscore COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  compute-feats  MFCC features from audio, with CMVN and deltas (compute-mfcc-feats)\n"
    "  score     score feature frames against one or more models (offline)\n"
    "  align     align features to compiled training graphs (Kaldi's gmm-align-compiled)\n"
    "  compile-graphs  training graphs from phone transcripts (monophone models)\n"
    "  acc-stats accumulate GMM training statistics from alignments (Kaldi's gmm-acc-stats-ali)\n"
    "  sum-accs  sum accumulator files (Kaldi's gmm-sum-accs)\n"
    "  est       re-estimate a model from its statistics (Kaldi's gmm-est)\n"
    "  train     the whole training loop of Kaldi's train_mono.sh (flat start, realignment)\n"
    "  train-gmm train a single GMM from features on GPUs or the CPU "
    "(gmm-global-init-from-feats)\n"
    "  adapt     MAP-adapt a model per utterance or speaker (Kaldi's gmm-adapt-map)\n"
    "  convert   convert a model between Kaldi, HTK, Sphinx and native formats\n"
    "  info      describe a model\n"
    "  bench     measure scoring throughput against the two-kernel BLAS path\n"
    "  stream    score through a gmmscored (same output as score)\n"
    "  bench-stream  load-test a gmmscored with real-time streams\n"
    "  health    ask a gmmscored whether it is serving\n"
    "\n"
    "Run 'gmmscore COMMAND --help' for a command's options.\n";

}  // namespace

int main(int argc, char** argv) {
  // As in gmmscored (server/main.cc): no lock-order graph behind every absl::Mutex (gRPC's lock).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  // The readers refuse what they cannot hold; should an allocation still fail, the command ends
  // with a message and status 1, not an abort.
  try {
    if (command == "compute-feats") return gmmscore::RunComputeFeats(argc, argv);
    if (command == "score") return gmmscore::RunScore(argc, argv);
    if (command == "align") return gmmscore::RunAlign(argc, argv);
    if (command == "compile-graphs") return gmmscore::RunCompileGraphs(argc, argv);
    if (command == "acc-stats") return gmmscore::RunAccStats(argc, argv);
    if (command == "sum-accs") return gmmscore::RunSumAccs(argc, argv);
    if (command == "est") return gmmscore::RunEst(argc, argv);
    if (command == "train") return gmmscore::RunTrain(argc, argv);
    if (command == "train-gmm") return gmmscore::RunTrainGmm(argc, argv);
    if (command == "adapt") return gmmscore::RunAdapt(argc, argv);
    if (command == "convert") return gmmscore::RunConvert(argc, argv);
    if (command == "info") return gmmscore::RunInfo(argc, argv);
    if (command == "bench") return gmmscore::RunBench(argc, argv);
    if (command == "stream") return gmmscore::RunStream(argc, argv);
    if (command == "bench-stream") return gmmscore::RunBenchStream(argc, argv);
    if (command == "health") return gmmscore::RunHealth(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "gmmscore %s: out of memory\n", command.c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gmmscore %s: %s\n", command.c_str(), e.what());
    return 1;
  }
  std::fprintf(stderr, "gmmscore: unknown command '%s'\n\n%s", command.c_str(), kUsage);
  return 2;
}

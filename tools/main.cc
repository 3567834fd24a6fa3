// gmmscore: the command-line tool. One binary, subcommands (docs/ARCHITECTURE.md).
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "absl/synchronization/mutex.h"
#include "cli/invocation.h"
#include "loadgen/stream_bench_command.h"
#include "tools/commands.h"
#include "tools/kaldi_tools.h"

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
    "  boost-silence  scale the GMM weights of the given phones' pdfs (gmm-boost-silence)\n"
    "  kaldi-links  make links named as the Kaldi tools gmmscore implements; run under such\n"
    "            a name, gmmscore is that tool (Kaldi's recipes then run without Kaldi)\n"
    "\n"
    "Run 'gmmscore COMMAND --help' for a command's options.\n";

using Command = int (*)(int argc, char** argv);

// The subcommand of that name, or nullptr.
Command FindCommand(const std::string& command) {
  using namespace gmmscore;  // NOLINT: the table below names every subcommand
  static const std::map<std::string, Command> commands = {
      {"compute-feats", &RunComputeFeats},
      {"score", &RunScore},
      {"align", &RunAlign},
      {"compile-graphs", &RunCompileGraphs},
      {"acc-stats", &RunAccStats},
      {"sum-accs", &RunSumAccs},
      {"est", &RunEst},
      {"train", &RunTrain},
      {"train-gmm", &RunTrainGmm},
      {"adapt", &RunAdapt},
      {"convert", &RunConvert},
      {"info", &RunInfo},
      {"bench", &RunBench},
      {"stream", &RunStream},
      {"bench-stream", &RunBenchStream},
      {"health", &RunHealth},
      {"boost-silence", &RunBoostSilence},
      {"gmm-info", &RunGmmInfo},
      {"gmm-init-mono", &RunGmmInitMono},
      {"tree-info", &RunTreeInfo},
      {"feat-to-dim", &RunFeatToDim},
      {"feat-to-len", &RunFeatToLen},
      {"copy-feats", &RunCopyFeats},
      {"subset-feats", &RunSubsetFeats},
      {"add-deltas", &RunAddDeltas},
      {"splice-feats", &RunSpliceFeats},
      {"ali-to-post", &RunAliToPost},
      {"weight-silence-post", &RunWeightSilencePost},
      {"gmm-est-fmllr", &RunGmmEstFmllr},
      {"gmm-est-fmllr-gpost", &RunGmmEstFmllrGpost},
      {"gmm-post-to-gpost", &RunGmmPostToGpost},
      {"transform-feats", &RunTransformFeats},
      {"compose-transforms", &RunComposeTransforms},
      {"compute-cmvn-stats", &RunComputeCmvnStats},
      {"apply-cmvn", &RunApplyCmvn},
      {"ali-to-pdf", &RunAliToPdf},
      {"ali-to-phones", &RunAliToPhones},
      {"copy-int-vector", &RunCopyIntVector},
      {"align-equal-compiled", &RunAlignEqualCompiled},
      {"compile-train-graphs", &RunCompileTrainGraphs},
      {"gmm-copy", &RunGmmCopy},
      {"gmm-compute-likes", &RunGmmComputeLikes},
      {"show-alignments", &RunShowAlignments},
      {"copy-matrix", &RunCopyMatrix},
      {"wav-to-duration", &RunWavToDuration},
      {"gmm-mixup", &RunGmmMixup},
      {"extract-segments", &RunExtractSegments},
      {"kaldi-links", &RunKaldiLinks},
  };
  const auto it = commands.find(command);
  return it == commands.end() ? nullptr : it->second;
}

}  // namespace

int main(int argc, char** argv) {
  // As in gmmscored (server/main.cc): no lock-order graph behind every absl::Mutex (gRPC's lock).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // Run under a Kaldi tool's name: that tool, as `gmmscore SUBCOMMAND [implied options] ARGS`.
  if (const gmmscore::KaldiTool* tool = gmmscore::FindKaldiTool(argv[0]); tool != nullptr) {
    return gmmscore::RunKaldiTool(*tool, argc, argv);
  }
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  if (const Command run = FindCommand(command); run != nullptr) {
    return gmmscore::RunGuarded(command, run, argc, argv);
  }
  std::fprintf(stderr, "gmmscore: unknown command '%s'\n\n%s", command.c_str(), kUsage);
  return 2;
}

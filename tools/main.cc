// gmmscore: the command-line tool. One binary, subcommands (docs/ARCHITECTURE.md).
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "tools/commands.h"
#include "tools/invocation.h"
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

// Runs a subcommand; -1 where there is none of that name.
int Dispatch(const std::string& command, int argc, char** argv) {
  using namespace gmmscore;  // NOLINT: the table below names every subcommand
  if (command == "compute-feats") return RunComputeFeats(argc, argv);
  if (command == "score") return RunScore(argc, argv);
  if (command == "align") return RunAlign(argc, argv);
  if (command == "compile-graphs") return RunCompileGraphs(argc, argv);
  if (command == "acc-stats") return RunAccStats(argc, argv);
  if (command == "sum-accs") return RunSumAccs(argc, argv);
  if (command == "est") return RunEst(argc, argv);
  if (command == "train") return RunTrain(argc, argv);
  if (command == "train-gmm") return RunTrainGmm(argc, argv);
  if (command == "adapt") return RunAdapt(argc, argv);
  if (command == "convert") return RunConvert(argc, argv);
  if (command == "info") return RunInfo(argc, argv);
  if (command == "bench") return RunBench(argc, argv);
  if (command == "stream") return RunStream(argc, argv);
  if (command == "bench-stream") return RunBenchStream(argc, argv);
  if (command == "health") return RunHealth(argc, argv);
  if (command == "boost-silence") return RunBoostSilence(argc, argv);
  if (command == "gmm-info") return RunGmmInfo(argc, argv);
  if (command == "gmm-init-mono") return RunGmmInitMono(argc, argv);
  if (command == "tree-info") return RunTreeInfo(argc, argv);
  if (command == "feat-to-dim") return RunFeatToDim(argc, argv);
  if (command == "feat-to-len") return RunFeatToLen(argc, argv);
  if (command == "copy-feats") return RunCopyFeats(argc, argv);
  if (command == "subset-feats") return RunSubsetFeats(argc, argv);
  if (command == "add-deltas") return RunAddDeltas(argc, argv);
  if (command == "splice-feats") return RunSpliceFeats(argc, argv);
  if (command == "ali-to-post") return RunAliToPost(argc, argv);
  if (command == "weight-silence-post") return RunWeightSilencePost(argc, argv);
  if (command == "gmm-est-fmllr") return RunGmmEstFmllr(argc, argv);
  if (command == "transform-feats") return RunTransformFeats(argc, argv);
  if (command == "compute-cmvn-stats") return RunComputeCmvnStats(argc, argv);
  if (command == "apply-cmvn") return RunApplyCmvn(argc, argv);
  if (command == "ali-to-pdf") return RunAliToPdf(argc, argv);
  if (command == "ali-to-phones") return RunAliToPhones(argc, argv);
  if (command == "copy-int-vector") return RunCopyIntVector(argc, argv);
  if (command == "align-equal-compiled") return RunAlignEqualCompiled(argc, argv);
  if (command == "compile-train-graphs") return RunCompileTrainGraphs(argc, argv);
  if (command == "gmm-copy") return RunGmmCopy(argc, argv);
  if (command == "gmm-compute-likes") return RunGmmComputeLikes(argc, argv);
  if (command == "show-alignments") return RunShowAlignments(argc, argv);
  if (command == "copy-matrix") return RunCopyMatrix(argc, argv);
  if (command == "wav-to-duration") return RunWavToDuration(argc, argv);
  if (command == "gmm-mixup") return RunGmmMixup(argc, argv);
  if (command == "extract-segments") return RunExtractSegments(argc, argv);
  if (command == "kaldi-links") return RunKaldiLinks(argc, argv);
  return -1;
}

// Runs a subcommand, turning an exception that escapes it into Kaldi's error exit.
int RunGuarded(const std::string& command, int argc, char** argv) {
  // The readers refuse what they cannot hold; should an allocation still fail, the command ends
  // with a message and Kaldi's error status, not an abort.
  try {
    return Dispatch(command, argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "gmmscore %s: out of memory\n", command.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gmmscore %s: %s\n", command.c_str(), e.what());
  }
  return gmmscore::kErrorExitStatus;
}

}  // namespace

int main(int argc, char** argv) {
  // As in gmmscored (server/main.cc): no lock-order graph behind every absl::Mutex (gRPC's lock).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // Run under a Kaldi tool's name: that tool, as `gmmscore SUBCOMMAND [implied options] ARGS`.
  if (const gmmscore::KaldiTool* tool = gmmscore::FindKaldiTool(argv[0]); tool != nullptr) {
    gmmscore::SetKaldiToolName(tool->name);
    std::vector<char*> args = {argv[0], const_cast<char*>(tool->command)};
    for (const char* option : tool->implied) args.push_back(const_cast<char*>(option));
    for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
    args.push_back(nullptr);
    return RunGuarded(tool->command, static_cast<int>(args.size()) - 1, args.data());
  }
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  if (const int code = RunGuarded(command, argc, argv); code != -1) return code;
  std::fprintf(stderr, "gmmscore: unknown command '%s'\n\n%s", command.c_str(), kUsage);
  return 2;
}

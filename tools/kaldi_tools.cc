#include "tools/kaldi_tools.h"

#include <filesystem>

#include "tools/commands.h"
#include "cli/invocation.h"

namespace gmmscore {

const std::vector<KaldiTool>& KaldiTools() {
  static const std::vector<KaldiTool> tools = {
      {"add-deltas", "add-deltas", &RunAddDeltas, {}},
      {"ali-to-pdf", "ali-to-pdf", &RunAliToPdf, {}},
      {"ali-to-phones", "ali-to-phones", &RunAliToPhones, {}},
      {"ali-to-post", "ali-to-post", &RunAliToPost, {}},
      {"align-equal-compiled", "align-equal-compiled", &RunAlignEqualCompiled, {}},
      {"apply-cmvn", "apply-cmvn", &RunApplyCmvn, {}},
      {"compile-train-graphs", "compile-train-graphs", &RunCompileTrainGraphs, {}},
      {"compose-transforms", "compose-transforms", &RunComposeTransforms, {}},
      {"compute-cmvn-stats", "compute-cmvn-stats", &RunComputeCmvnStats, {}},
      {"compute-mfcc-feats", "compute-feats", &RunComputeFeats, {}},
      {"copy-feats", "copy-feats", &RunCopyFeats, {}},
      {"copy-int-vector", "copy-int-vector", &RunCopyIntVector, {}},
      {"copy-matrix", "copy-matrix", &RunCopyMatrix, {}},
      {"extract-segments", "extract-segments", &RunExtractSegments, {}},
      {"feat-to-dim", "feat-to-dim", &RunFeatToDim, {}},
      {"feat-to-len", "feat-to-len", &RunFeatToLen, {}},
      {"gmm-acc-stats", "acc-stats", &RunAccStats, {"--posteriors"}},
      {"gmm-acc-stats-ali", "acc-stats", &RunAccStats, {}},
      {"gmm-adapt-map", "adapt", &RunAdapt, {}},
      {"gmm-align-compiled", "align", &RunGmmAlignCompiled, {}},
      {"gmm-boost-silence", "boost-silence", &RunBoostSilence, {}},
      {"gmm-compute-likes", "gmm-compute-likes", &RunGmmComputeLikes, {}},
      {"gmm-copy", "gmm-copy", &RunGmmCopy, {}},
      {"gmm-est-fmllr", "gmm-est-fmllr", &RunGmmEstFmllr, {}},
      {"gmm-est-fmllr-gpost", "gmm-est-fmllr-gpost", &RunGmmEstFmllrGpost, {}},
      {"gmm-est", "est", &RunEst, {}},
      {"gmm-info", "gmm-info", &RunGmmInfo, {}},
      {"gmm-init-mono", "gmm-init-mono", &RunGmmInitMono, {}},
      {"gmm-mixup", "gmm-mixup", &RunGmmMixup, {}},
      {"gmm-post-to-gpost", "gmm-post-to-gpost", &RunGmmPostToGpost, {}},
      {"gmm-sum-accs", "sum-accs", &RunSumAccs, {}},
      {"show-alignments", "show-alignments", &RunShowAlignments, {}},
      {"splice-feats", "splice-feats", &RunSpliceFeats, {}},
      {"subset-feats", "subset-feats", &RunSubsetFeats, {}},
      {"transform-feats", "transform-feats", &RunTransformFeats, {}},
      {"tree-info", "tree-info", &RunTreeInfo, {}},
      {"wav-to-duration", "wav-to-duration", &RunWavToDuration, {}},
      {"weight-silence-post", "weight-silence-post", &RunWeightSilencePost, {}},
  };
  return tools;
}

const KaldiTool* FindKaldiTool(const std::string& program_path) {
  const std::string name = std::filesystem::path(program_path).filename().string();
  for (const KaldiTool& tool : KaldiTools()) {
    if (name == tool.name) return &tool;
  }
  return nullptr;
}

int RunKaldiTool(const KaldiTool& tool, int argc, char** argv) {
  SetKaldiToolName(tool.name);
  std::vector<char*> args = {argv[0], const_cast<char*>(tool.command)};
  for (const char* option : tool.implied) args.push_back(const_cast<char*>(option));
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  return RunGuarded(tool.command, tool.run, static_cast<int>(args.size()) - 1, args.data());
}

}  // namespace gmmscore

// The gmmscore subcommands; each parses its own options and returns a process exit code.
#pragma once

namespace gmmscore {

int RunComputeFeats(int argc, char** argv);
int RunScore(int argc, char** argv);
int RunAlign(int argc, char** argv);             // with --server (tools/align_through_server.cc)
int RunGmmAlignCompiled(int argc, char** argv);  // without
int RunCompileGraphs(int argc, char** argv);
int RunAccStats(int argc, char** argv);
int RunSumAccs(int argc, char** argv);
int RunEst(int argc, char** argv);
int RunTrain(int argc, char** argv);
int RunTrainGmm(int argc, char** argv);
int RunAdapt(int argc, char** argv);
int RunConvert(int argc, char** argv);
int RunInfo(int argc, char** argv);
int RunBench(int argc, char** argv);
int RunStream(int argc, char** argv);
int RunHealth(int argc, char** argv);
int RunBoostSilence(int argc, char** argv);
int RunGmmInfo(int argc, char** argv);
int RunGmmInitMono(int argc, char** argv);
int RunTreeInfo(int argc, char** argv);
// Kaldi's feature-table tools, run under their Kaldi names (tools/kaldi_tools.h).
int RunFeatToDim(int argc, char** argv);
int RunFeatToLen(int argc, char** argv);
int RunCopyFeats(int argc, char** argv);
int RunSubsetFeats(int argc, char** argv);
int RunAddDeltas(int argc, char** argv);
int RunSpliceFeats(int argc, char** argv);
int RunAliToPost(int argc, char** argv);
int RunWeightSilencePost(int argc, char** argv);
int RunGmmEstFmllr(int argc, char** argv);
int RunGmmEstFmllrGpost(int argc, char** argv);
int RunGmmPostToGpost(int argc, char** argv);
int RunTransformFeats(int argc, char** argv);
int RunComposeTransforms(int argc, char** argv);
int RunComputeCmvnStats(int argc, char** argv);
int RunApplyCmvn(int argc, char** argv);
int RunAliToPdf(int argc, char** argv);
int RunAliToPhones(int argc, char** argv);
int RunCopyIntVector(int argc, char** argv);
int RunAlignEqualCompiled(int argc, char** argv);
int RunCompileTrainGraphs(int argc, char** argv);
// Kaldi's model, matrix and audio tools, run under their Kaldi names.
int RunGmmCopy(int argc, char** argv);
int RunGmmComputeLikes(int argc, char** argv);
int RunShowAlignments(int argc, char** argv);
int RunCopyMatrix(int argc, char** argv);
int RunWavToDuration(int argc, char** argv);
int RunGmmMixup(int argc, char** argv);
int RunExtractSegments(int argc, char** argv);

}  // namespace gmmscore

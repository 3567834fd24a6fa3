// gmm-init-mono and tree-info under their Kaldi names (gmmscore kaldi-links), against what real
// Kaldi wrote in tests/data/kaldi-tri-mono: steps/train_mono.sh's own gmm-init-mono command (shared
// phones, features through apply-cmvn | add-deltas | subset-feats) gives Kaldi's 0.mdl and tree
// byte for byte. Also the other options, the topology checks, and exit statuses as Kaldi's tools
// give them (1 for a usage error, 255 for an error).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "formats/kaldi_model.h"
#include "formats/kaldi_model_copy.h"
#include "formats/kaldi_topology.h"
#include "formats/kaldi_tree.h"
#include "tests/test_util.h"
#include "train/mono_init.h"

namespace gmmscore::testing {
namespace {

std::string Cli() { return std::string(GMMSCORE_CLI); }

// train_mono.sh's features for gmm-init-mono: job 1's first 10 utterances (all of speaker egbf3;
// feats.ark holds just those, cmvn.ark that speaker's statistics).
constexpr char kTrainFeats[] =
    " '--train-feats=ark,s,cs:apply-cmvn  --utt2spk=ark:utt2spk ark:cmvn.ark ark:feats.ark ark:- "
    "| add-deltas  ark:- ark:- | subset-feats --n=10 ark:- ark:-|' ";

class GmmInitMonoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(RunCommand(Cli() + " kaldi-links " + dir_.file("bin") + " >/dev/null", log()), 0)
        << ReadFile(log());
  }
  // Runs a Kaldi tool in tests/data/kaldi-tri-mono, as train_mono.sh runs it in its folder.
  int Run(const std::string& tool_and_args) {
    return RunCommand("cd " + DataPath("kaldi-tri-mono") + " && PATH=" + dir_.file("bin") +
                          ":$PATH " + tool_and_args,
                      log());
  }
  std::string file(const std::string& name) const { return dir_.file(name); }
  std::string log() const { return dir_.file("log"); }

  TempDir dir_;
};

TEST_F(GmmInitMonoTest, TrainMonosCommandGivesKaldisModelAndTree) {
  ASSERT_EQ(Run("gmm-init-mono --shared-phones=sets.int" + std::string(kTrainFeats) + "topo 39 " +
                file("0.mdl") + " " + file("tree")),
            0)
      << ReadFile(log());
  EXPECT_EQ(ReadFile(file("tree")), ReadFile(DataPath("kaldi-tri-mono/tree")));
  EXPECT_EQ(ReadFile(file("0.mdl")), ReadFile(DataPath("kaldi-tri-mono/0.mdl")));
  // Kaldi prints its command line and nothing more of its own (the pipe's tools log theirs).
  EXPECT_EQ(ReadFile(log()).find("WARNING"), std::string::npos) << ReadFile(log());

  // Text: what Kaldi's own text writers make of Kaldi's files (gmm-copy --binary=false, and the
  // tree's text form), which is what Kaldi's gmm-init-mono --binary=false writes.
  ASSERT_EQ(Run("gmm-init-mono --binary=false --shared-phones=sets.int" + std::string(kTrainFeats) +
                "topo 39 " + file("0.txt.mdl") + " " + file("tree.txt")),
            0)
      << ReadFile(log());
  ASSERT_EQ(Run("gmm-copy --binary=false 0.mdl " + file("kaldi.txt.mdl")), 0) << ReadFile(log());
  EXPECT_EQ(ReadFile(file("0.txt.mdl")), ReadFile(file("kaldi.txt.mdl")));
  auto kaldi_tree = ReadKaldiTreeFile(DataPath("kaldi-tri-mono/tree"));
  ASSERT_TRUE(kaldi_tree.ok()) << kaldi_tree.status();
  ASSERT_TRUE(WriteKaldiTreeFile(*kaldi_tree, file("kaldi.tree.txt"), false).ok());
  EXPECT_EQ(ReadFile(file("tree.txt")), ReadFile(file("kaldi.tree.txt")));
  ASSERT_EQ(Run("tree-info --print-args=false " + file("tree.txt") + " >" + file("info")), 0);
  EXPECT_EQ(ReadFile(file("info")), "num-pdfs 127\ncontext-width 1\ncentral-position 0\n");
}

TEST_F(GmmInitMonoTest, WithoutFeaturesOrSharedPhones) {
  // Mean 1 and variance 1 (gmm-init-mono's defaults), a pdf per pdf class of every phone.
  ASSERT_EQ(Run("gmm-init-mono topo 39 " + file("0.mdl") + " " + file("tree")), 0)
      << ReadFile(log());
  auto model = ReadKaldiModelFile(file("0.mdl"));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->num_states(), 10 * 5 + 156 * 3);
  EXPECT_EQ(model->hmm().NumTransitionStates(), 518);
  for (int64_t g = 0; g < model->num_gauss(); ++g) {
    for (int32_t d = 0; d < 39; ++d) {
      ASSERT_EQ(model->mean(g)[size_t(d)], 1.0f);
      ASSERT_EQ(model->variance(g)[size_t(d)], 1.0f);
    }
  }
  ASSERT_EQ(Run("tree-info " + file("tree") + " >" + file("info")), 0);
  EXPECT_EQ(ReadFile(file("info")), "num-pdfs 518\ncontext-width 1\ncentral-position 0\n");

  // --perturb-factor: the means times inverse variances move by the same draws every run.
  for (const char* out : {"a.mdl", "b.mdl"}) {
    ASSERT_EQ(Run("gmm-init-mono --perturb-factor=0.2 topo 39 " + file(out) + " " + file("t")), 0)
        << ReadFile(log());
  }
  EXPECT_EQ(ReadFile(file("a.mdl")), ReadFile(file("b.mdl")));
  auto plain = ReadKaldiStoredModel(file("0.mdl"), true, true);
  auto perturbed = ReadKaldiStoredModel(file("a.mdl"), true, true);
  ASSERT_TRUE(plain.ok() && perturbed.ok());
  EXPECT_EQ(perturbed->pdfs[0].inv_vars, plain->pdfs[0].inv_vars);
  EXPECT_NE(perturbed->pdfs[0].means_invvars, plain->pdfs[0].means_invvars);
  EXPECT_NE(perturbed->pdfs[0].means_invvars, perturbed->pdfs[1].means_invvars);
  for (float mi : perturbed->pdfs[0].means_invvars.data) EXPECT_LT(std::abs(mi - 1.0f), 1.5f);
}

TEST_F(GmmInitMonoTest, BadArgumentsExitAsKaldisTools) {
  const std::string out = " " + file("0.mdl") + " " + file("tree");
  EXPECT_EQ(Run("gmm-init-mono topo 39 " + file("0.mdl")), 1);  // usage
  EXPECT_NE(ReadFile(log()).find("gmm-init-mono"), std::string::npos);
  EXPECT_EQ(Run("tree-info"), 1);
  EXPECT_EQ(Run("gmm-init-mono --no-such-option=1 topo 39" + out), 255);
  EXPECT_EQ(Run("gmm-init-mono topo 0" + out), 255);
  EXPECT_NE(ReadFile(log()).find("ERROR (gmm-init-mono"), std::string::npos) << ReadFile(log());
  EXPECT_EQ(Run("gmm-init-mono missing-topo 39" + out), 255);
  EXPECT_NE(ReadFile(log()).find("missing-topo"), std::string::npos) << ReadFile(log());
  // Features of another dimension than the one given.
  EXPECT_EQ(Run("gmm-init-mono" + std::string(kTrainFeats) + "topo 13" + out), 255);
  EXPECT_NE(ReadFile(log()).find("dimension 39, expected 13"), std::string::npos)
      << ReadFile(log());
  // Shared phones: a phone twice on a line, a phone not in the topology, one in two sets.
  WriteFile(file("sets"), "1 2 2\n");
  EXPECT_EQ(Run("gmm-init-mono --shared-phones=" + file("sets") + " topo 39" + out), 255);
  EXPECT_NE(ReadFile(log()).find(file("sets") + ":1:"), std::string::npos) << ReadFile(log());
  WriteFile(file("sets"), "1 2\n167\n");
  EXPECT_EQ(Run("gmm-init-mono --shared-phones=" + file("sets") + " topo 39" + out), 255);
  EXPECT_NE(ReadFile(log()).find("phone 167"), std::string::npos) << ReadFile(log());
  WriteFile(file("sets"), "1 2\n2 3\n");
  EXPECT_EQ(Run("gmm-init-mono --shared-phones=" + file("sets") + " topo 39" + out), 255);
  // tree-info on a broken tree: the error names the file.
  WriteFile(file("cut"), ReadFile(DataPath("kaldi-tri-mono/tree")).substr(0, 100));
  EXPECT_EQ(Run("tree-info " + file("cut")), 255);
  EXPECT_NE(ReadFile(log()).find("ERROR (tree-info[gmmscore]) " + file("cut")), std::string::npos)
      << ReadFile(log());
}

// A phone the shared sets leave out gets no transition-states where the stub map has no pdfs for
// it: Kaldi's warning, and the rest of the model.
TEST_F(GmmInitMonoTest, PhonesLeftOutOfTheSetsAreWarnedAbout) {
  std::string sets;
  for (int phone = 1; phone <= 165; ++phone) sets += std::to_string(phone) + "\n";
  WriteFile(file("sets"), sets);
  ASSERT_EQ(Run("gmm-init-mono --shared-phones=" + file("sets") + " topo 39" + " " + file("0.mdl") +
                " " + file("tree")),
            0)
      << ReadFile(log());
  EXPECT_NE(ReadFile(log()).find("WARNING (gmm-init-mono) ContextDependency::GetPdfInfo, no pdfs "
                                 "returned for position 0 of phone 166"),
            std::string::npos)
      << ReadFile(log());
  auto model = ReadKaldiModelFile(file("0.mdl"));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->hmm().NumTransitionStates(), 518 - 3);
}

absl::StatusOr<HmmTopology> TopologyOf(const std::string& text) {
  TempDir dir;
  WriteFile(dir.file("topo"), text);
  std::vector<std::string> warnings;
  return ReadKaldiTopologyFile(dir.file("topo"), &warnings);
}

TEST(KaldiTopologyFileTest, KaldisChecks) {
  const std::string head = "<Topology> <TopologyEntry> <ForPhones> 1 2 </ForPhones> ";
  const std::string tail = "</TopologyEntry> </Topology> ";
  auto good = TopologyOf(head + "<State> 0 <PdfClass> 0 <Transition> 0 0.5 <Transition> 1 0.5 " +
                         "</State> <State> 1 </State> " + tail);
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ(good->phones, (std::vector<int32_t>{1, 2}));
  // Only a final state; a final state with transitions; a zero probability; a state nothing
  // enters; pdf classes with a gap; a phone in two entries.
  EXPECT_FALSE(TopologyOf(head + "<State> 0 </State> " + tail).ok());
  EXPECT_FALSE(TopologyOf(head + "<State> 0 <PdfClass> 0 <Transition> 1 1 </State> " +
                          "<State> 1 <Transition> 0 1 </State> " + tail)
                   .ok());
  EXPECT_FALSE(TopologyOf(head + "<State> 0 <PdfClass> 0 <Transition> 0 0 <Transition> 1 1 " +
                          "</State> <State> 1 </State> " + tail)
                   .ok());
  EXPECT_FALSE(TopologyOf(head + "<State> 0 <PdfClass> 0 <Transition> 2 1 </State> " +
                          "<State> 1 <PdfClass> 1 <Transition> 2 1 </State> <State> 2 </State> " +
                          tail)
                   .ok());
  EXPECT_FALSE(TopologyOf(head + "<State> 0 <PdfClass> 1 <Transition> 1 1 </State> " +
                          "<State> 1 </State> " + tail)
                   .ok());
  EXPECT_FALSE(TopologyOf(head + "<State> 0 <PdfClass> 0 <Transition> 1 1 </State> " +
                          "<State> 1 </State> </TopologyEntry> <TopologyEntry> <ForPhones> 2 " +
                          "</ForPhones> <State> 0 <PdfClass> 0 <Transition> 1 1 </State> " +
                          "<State> 1 </State> " + tail)
                   .ok());
  auto bad = TopologyOf(head + "<State> 0 <PdfClass> 0 <Transition> 3 1 </State> " +
                        "<State> 1 </State> " + tail);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("topology entry 0: state 0: no state 3"), std::string::npos)
      << bad.status();
}

TEST(GlobalStatsTest, KaldisMeanAndInverseVariance) {
  GlobalStats stats(2);
  EXPECT_FALSE(stats.Gaussian().ok());  // no features were seen
  Matrix frames(3, 2);
  frames.data = {1, 0, 2, 0, 6, 0};
  ASSERT_TRUE(stats.Add(frames).ok());
  EXPECT_FALSE(stats.Add(Matrix(1, 3)).ok());
  auto g = stats.Gaussian();
  ASSERT_FALSE(g.ok());  // the second dimension does not vary: Kaldi's "bad variance"
  EXPECT_NE(g.status().message().find("bad variance"), std::string::npos);
  GlobalStats varied(1);
  Matrix x(4, 1);
  x.data = {1, 2, 3, 4};
  ASSERT_TRUE(varied.Add(x).ok());
  auto h = varied.Gaussian();
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->mean, std::vector<float>{2.5f});
  EXPECT_EQ(h->inv_var, std::vector<float>{0.8f});
}

}  // namespace
}  // namespace gmmscore::testing

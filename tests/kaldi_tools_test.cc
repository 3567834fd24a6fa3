// gmmscore under Kaldi's tool names (gmmscore kaldi-links) and Kaldi's command-line conventions
// in every subcommand, invoked as Kaldi's recipes invoke them, on the real Kaldi data in
// tests/data/kaldi-mono: piped and silence-boosted models, --config, --print-args, --verbose,
// Kaldi's parser under Kaldi's names, exit statuses (255 on error), and an ERROR with exit 255,
// never a crash, where an output cannot be opened.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "formats/kaldi_model.h"
#include "formats/matrix_table.h"
#include "model/boost_pdfs.h"
#include "tests/test_util.h"

namespace gmmscore::testing {
namespace {

std::string Cli() { return std::string(GMMSCORE_CLI); }
std::string Model() { return DataPath("kaldi-mono/final.mdl"); }
std::string Feats() { return DataPath("kaldi-mono/feats.ark"); }
std::string Graphs() { return DataPath("kaldi-mono/graphs.fsts"); }

constexpr char kAlignOptions[] =
    " --transition-scale=1.0 --acoustic-scale=0.1 --self-loop-scale=0.1 --beam=6"
    " --retry-beam=40 ";

// A folder of Kaldi-named links, made by the command under test.
class KaldiToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(RunCommand(Cli() + " kaldi-links " + bin() + " >/dev/null", log()), 0)
        << ReadFile(log());
  }
  std::string bin() const { return dir_.file("bin"); }
  std::string tool(const std::string& name) const { return dir_.file("bin/" + name); }
  std::string file(const std::string& name) const { return dir_.file(name); }
  std::string log() const { return dir_.file("log"); }

  TempDir dir_;
};

TEST_F(KaldiToolsTest, LinksAreTheTools) {
  for (const char* name :
       {"gmm-align-compiled", "gmm-acc-stats-ali", "gmm-acc-stats", "gmm-sum-accs", "gmm-est",
        "gmm-boost-silence", "gmm-info", "compute-mfcc-feats", "gmm-adapt-map"}) {
    EXPECT_TRUE(std::filesystem::is_symlink(tool(name))) << name;
  }
  // Made again over its own links: fine.
  EXPECT_EQ(RunCommand(Cli() + " kaldi-links " + bin() + " >/dev/null", log()), 0);
  // gmm-info prints Kaldi's lines, which train_mono.sh greps.
  ASSERT_EQ(
      RunCommand(tool("gmm-info") + " --print-args=false " + Model() + " >" + file("info"), log()),
      0)
      << ReadFile(log());
  EXPECT_EQ(ReadFile(file("info")),
            "number of phones 18\nnumber of pdfs 56\nnumber of transition-ids 120\n"
            "number of transition-states 56\nfeature dimension 39\nnumber of gaussians 677\n");
  // Kaldi's tools print their command line first (--print-args defaults to true).
  ASSERT_EQ(RunCommand(tool("gmm-info") + " " + Model() + " >/dev/null", log()), 0);
  EXPECT_EQ(ReadFile(log()).rfind(tool("gmm-info") + " " + Model() + " \n", 0), 0u)
      << ReadFile(log());
}

// The links go to gmmscore-kaldi, which starts in milliseconds (bench/startup_bench.py): it needs
// none of the server's libraries, and loads OpenFst and libsndfile only when a tool uses them.
TEST_F(KaldiToolsTest, LinksGoToTheFastStartBinary) {
  const std::filesystem::path binary = std::filesystem::canonical(tool("gmm-info"));
  EXPECT_EQ(binary.filename(), "gmmscore-kaldi");
  ASSERT_EQ(RunCommand("readelf -d " + binary.string() + " >" + file("dynamic"), log()), 0)
      << ReadFile(log());
  const std::string dynamic = ReadFile(file("dynamic"));
  ASSERT_NE(dynamic.find("(NEEDED)"), std::string::npos) << dynamic;
  for (const char* library : {"libgrpc", "libgpr", "libprotobuf", "libabsl", "libfst", "libsndfile",
                              "libfftw3", "libopenblas", "libcudart"}) {
    EXPECT_EQ(dynamic.find(library), std::string::npos) << library << " is linked:\n" << dynamic;
  }
}

// Without OpenFst's module beside it (a binary copied alone), a tool that reads FSTs fails with an
// ERROR that says what is missing and how to install it; the tools that need no FST still run.
TEST_F(KaldiToolsTest, TheFastStartBinaryWithoutOpenFstsModule) {
  const std::filesystem::path binary = std::filesystem::canonical(tool("gmm-info"));
  std::filesystem::create_directory(file("alone"));
  std::filesystem::copy_file(binary, file("alone/gmmscore-kaldi"));
  const std::string alone = file("alone/gmmscore-kaldi");
  EXPECT_EQ(RunCommand(alone + " gmm-align-compiled" + kAlignOptions + Model() +
                           " ark:" + Graphs() + " ark:" + Feats() + " ark:/dev/null",
                       log()),
            255);
  EXPECT_NE(ReadFile(log()).find("needs OpenFst's module libgmmscore_openfst.so, which is not "
                                 "beside this program"),
            std::string::npos)
      << ReadFile(log());
  EXPECT_NE(ReadFile(log()).find("cmake --install"), std::string::npos) << ReadFile(log());
  ASSERT_EQ(
      RunCommand(alone + " gmm-info --print-args=false " + Model() + " >" + file("info"), log()), 0)
      << ReadFile(log());
  EXPECT_NE(ReadFile(file("info")).find("number of pdfs 56"), std::string::npos);
}

// align_si.sh: gmm-align-compiled ... "gmm-boost-silence --boost=1.25 1 final.mdl - |" ...
TEST_F(KaldiToolsTest, AlignsWithAPipedBoostedModel) {
  const std::string piped = "'" + tool("gmm-boost-silence") + " --boost=1.0 1 " + Model() + " - |'";
  ASSERT_EQ(RunCommand(tool("gmm-align-compiled") + kAlignOptions + piped + " ark:" + Graphs() +
                           " ark:" + Feats() + " ark,t:" + file("ali.txt"),
                       log()),
            0)
      << ReadFile(log());
  // Boosted by 1.0: Kaldi's own alignments.
  EXPECT_EQ(ReadFile(file("ali.txt")), ReadFile(DataPath("kaldi-mono/ali.txt")));
  EXPECT_NE(ReadFile(log()).find("Boosted weights for 5 pdfs, by factor of 1"), std::string::npos)
      << ReadFile(log());

  // Boosted by 1.25: SIL's pdfs gain log(1.25) on every frame; the weights no longer sum to 1
  // and everything that reads models takes them as given.
  ASSERT_EQ(RunCommand(tool("gmm-boost-silence") + " --boost=1.25 1 " + Model() + " " +
                           file("boosted.mdl"),
                       log()),
            0)
      << ReadFile(log());
  for (const std::string& model : {Model(), file("boosted.mdl")}) {
    const std::string out = model == Model() ? file("plain.ark") : file("boosted.ark");
    ASSERT_EQ(RunCommand(Cli() + " score --quiet --model 'cat " + model +
                             " |' --feats ark:" + Feats() + " --out ark:" + out,
                         log()),
              0)
        << ReadFile(log());
  }
  auto plain = MatrixTableReader::Open("ark:" + file("plain.ark"));
  auto boosted = MatrixTableReader::Open("ark:" + file("boosted.ark"));
  ASSERT_TRUE(plain.ok() && boosted.ok());
  std::string key_a, key_b;
  Matrix a, b;
  ASSERT_TRUE(*(*plain)->Next(&key_a, &a));
  ASSERT_TRUE(*(*boosted)->Next(&key_b, &b));
  ASSERT_EQ(a.cols, b.cols);
  const auto model = ReadKaldiModelFile(Model());
  ASSERT_TRUE(model.ok());
  const std::vector<int32_t> silence = PdfsForPhones(model->hmm(), {1}).pdfs;
  ASSERT_EQ(silence.size(), 5u);
  for (int32_t pdf = 0; pdf < a.cols; ++pdf) {
    const bool boosted_pdf = std::find(silence.begin(), silence.end(), pdf) != silence.end();
    EXPECT_NEAR(b.data[pdf] - a.data[pdf], boosted_pdf ? std::log(1.25) : 0.0, 2e-3) << pdf;
  }
  EXPECT_EQ(RunCommand(tool("gmm-align-compiled") + kAlignOptions + file("boosted.mdl") +
                           " ark:" + Graphs() + " ark:" + Feats() + " ark:/dev/null",
                       log()),
            0)
      << ReadFile(log());
  EXPECT_EQ(RunCommand(tool("gmm-acc-stats-ali") + " " + file("boosted.mdl") + " ark:" + Feats() +
                           " ark:" + DataPath("kaldi-mono/ali.txt") + " /dev/null",
                       log()),
            0)
      << ReadFile(log());
}

TEST_F(KaldiToolsTest, KaldisParserUnderKaldisNames) {
  // --config, --verbose and --print-args are every tool's; options in a config file are read
  // first, the command line overrides them.
  std::ofstream(file("align.conf")) << "# as a recipe's conf/ file\n--beam=1  # too narrow\n"
                                    << "--retry-beam=40\n--acoustic_scale=0.1\n";
  ASSERT_EQ(
      RunCommand(tool("gmm-align-compiled") + " --config=" + file("align.conf") +
                     " --verbose=2 --print-args=false --transition-scale=1.0"
                     " --self-loop-scale=0.1 --beam=6 " +
                     Model() + " ark:" + Graphs() + " ark:" + Feats() + " ark,t:" + file("ali.txt"),
                 log()),
      0)
      << ReadFile(log());
  EXPECT_EQ(ReadFile(file("ali.txt")), ReadFile(DataPath("kaldi-mono/ali.txt")));
  EXPECT_EQ(ReadFile(log()).find("gmm-align-compiled --config"), std::string::npos);
  // The same options through gmmscore's own name.
  ASSERT_EQ(RunCommand(Cli() + " align --config " + file("align.conf") +
                           " --transition-scale=1.0 --self-loop-scale=0.1 --beam 6 " + Model() +
                           " ark:" + Graphs() + " ark:" + Feats() + " ark,t:" + file("ali2.txt"),
                       log()),
            0)
      << ReadFile(log());
  EXPECT_EQ(ReadFile(file("ali2.txt")), ReadFile(DataPath("kaldi-mono/ali.txt")));

  // Kaldi's parser: a valued option needs '=', unknown options and bad values are errors (255),
  // a wrong number of arguments is a usage error (1).
  const std::string args =
      " " + Model() + " ark:" + Graphs() + " ark:" + Feats() + " ark:/dev/null";
  EXPECT_EQ(RunCommand(tool("gmm-align-compiled") + " --beam 10" + args, log()), 255);
  EXPECT_NE(ReadFile(log()).find("option format is --x=y"), std::string::npos) << ReadFile(log());
  EXPECT_EQ(RunCommand(tool("gmm-align-compiled") + " --bogus=1" + args, log()), 255);
  EXPECT_NE(ReadFile(log()).find("Invalid option --bogus=1"), std::string::npos);
  EXPECT_EQ(
      RunCommand(tool("gmm-align-compiled") + " --config=" + file("missing.conf") + args, log()),
      255);
  EXPECT_NE(ReadFile(log()).find("missing.conf"), std::string::npos);
  std::ofstream(file("bad.conf")) << "beam=6\n";
  EXPECT_EQ(RunCommand(tool("gmm-est") + " --config=" + file("bad.conf") + " a b c", log()), 255);
  EXPECT_NE(ReadFile(log()).find("bad.conf:1"), std::string::npos) << ReadFile(log());
  EXPECT_EQ(RunCommand(tool("gmm-est") + " " + Model(), log()), 1);
  // Kaldi: options come first; after the first argument "--beam=6" is an argument.
  EXPECT_EQ(RunCommand(tool("gmm-info") + " " + Model() + " --beam=6", log()), 1);
  // A missing model: an ERROR naming it, 255.
  EXPECT_EQ(RunCommand(tool("gmm-info") + " " + file("missing.mdl"), log()), 255);
  EXPECT_NE(ReadFile(log()).find("ERROR (gmm-info"), std::string::npos) << ReadFile(log());
  EXPECT_NE(ReadFile(log()).find("missing.mdl"), std::string::npos) << ReadFile(log());
}

// ali-to-pdf, ali-to-phones and copy-int-vector give Kaldi's own files for Kaldi's alignments.
TEST_F(KaldiToolsTest, AlignmentConvertersGiveKaldisFiles) {
  const std::string ali = DataPath("kaldi-mono/ali.txt");
  ASSERT_EQ(RunCommand(tool("ali-to-pdf") + " " + Model() + " ark:" + ali + " ark,t:" +
                           file("pdf.txt") + " && " + tool("ali-to-phones") + " --per-frame " +
                           Model() + " ark:" + ali + " ark,t:" + file("phones.txt") + " && " +
                           tool("copy-int-vector") + " ark:" + ali + " ark:- | " +
                           tool("copy-int-vector") + " ark:- ark,t:" + file("ali.txt"),
                       log()),
            0)
      << ReadFile(log());
  EXPECT_EQ(ReadFile(file("pdf.txt")), ReadFile(DataPath("kaldi-mono/pdf_ali.txt")));
  EXPECT_EQ(ReadFile(file("phones.txt")), ReadFile(DataPath("kaldi-mono/phone_ali.txt")));
  EXPECT_EQ(ReadFile(file("ali.txt")), ReadFile(ali));
  // --write-lengths: (phone, frames) pairs, as analyze_alignments.sh reads them.
  ASSERT_EQ(RunCommand(tool("ali-to-phones") + " --write-lengths=true " + Model() + " ark:" + ali +
                           " ark,t:- | head -1 > " + file("lengths.txt"),
                       log()),
            0);
  EXPECT_EQ(ReadFile(file("lengths.txt")),
            "cards-001 1 17 ; 5 7 ; 6 17 ; 14 3 ; 3 8 ; 7 13 ; 11 4 ; 12 7 ; 17 10 ; 4 3 ; 16 6 ; "
            "1 13 \n");
  // A transition-id the model does not have: an error naming the utterance and frame.
  std::ofstream(file("bad.ali")) << "u1 2 2 999\n";
  EXPECT_EQ(
      RunCommand(tool("ali-to-pdf") + " " + Model() + " ark:" + file("bad.ali") + " ark:/dev/null",
                 log()),
      255);
  EXPECT_NE(ReadFile(log()).find("utterance u1, frame 2: transition-id 999"), std::string::npos)
      << ReadFile(log());
}

// train_mono.sh's first alignment: one transition-id a frame along a path of each graph, the same
// on every run (Kaldi's draws, seeded by the key); utterances without features are warnings.
TEST_F(KaldiToolsTest, AlignEqualCompiledStretchesARandomPath) {
  const std::string run = tool("align-equal-compiled") + " ark:" + Graphs() + " ark:" + Feats();
  ASSERT_EQ(
      RunCommand(run + " ark,t:" + file("a.txt") + " && " + run + " ark,t:" + file("b.txt"), log()),
      0)
      << ReadFile(log());
  EXPECT_NE(ReadFile(log()).find("Success: done 6 utterances."), std::string::npos);
  EXPECT_EQ(ReadFile(file("a.txt")), ReadFile(file("b.txt")));
  // As long as the features, and statistics can be gathered along them.
  ASSERT_EQ(RunCommand(tool("ali-to-phones") + " --per-frame " + Model() + " ark:" + file("a.txt") +
                           " ark,t:- | awk '{print $1, NF - 1}' > " + file("lengths") + " && " +
                           tool("gmm-acc-stats-ali") + " " + Model() + " ark:" + Feats() +
                           " ark:" + file("a.txt") + " /dev/null",
                       log()),
            0)
      << ReadFile(log());
  EXPECT_EQ(ReadFile(file("lengths")),
            "cards-001 108\ncards-003 152\nlib-0880 297\nraw-goforward 277\n"
            "sp0.9-cards-002 216\nsp1.1-lib-0920 548\n");
  EXPECT_EQ(
      RunCommand(tool("align-equal-compiled") + " ark:" + Graphs() + " ark:/dev/null ark:/dev/null",
                 log()),
      1);
  EXPECT_NE(ReadFile(log()).find("Computed 0 alignments; 6 lacked features, 0 had other errors."),
            std::string::npos)
      << ReadFile(log());
}

// Outputs that cannot be opened: an error naming the specifier and 255, in every tool that
// writes a table (this crashed in TableEntryWriter before).
TEST_F(KaldiToolsTest, UnopenableOutputsAreErrorsNotCrashes) {
  const std::string missing = file("no/such/folder/out.ark");
  std::ofstream(file("wav.scp")) << "";
  std::ofstream(file("text")) << "cards-001 SIL\n";
  const std::string commands[] = {
      tool("gmm-align-compiled") + kAlignOptions + Model() + " ark:" + Graphs() +
          " ark:" + Feats() + " ark:" + missing,
      Cli() + " score --quiet --model " + Model() + " --feats ark:" + Feats() +
          " --out ark:" + missing,
      tool("compute-mfcc-feats") + " scp:" + file("wav.scp") + " ark:" + missing,
      Cli() + " compile-graphs --phone-symbols=" + DataPath("kaldi-mono/phones.txt") + " " +
          Model() + " ark,t:" + file("text") + " ark:" + missing,
      tool("gmm-boost-silence") + " 1 " + Model() + " " + missing,
      tool("gmm-acc-stats-ali") + " " + Model() + " ark:" + Feats() +
          " ark:" + DataPath("kaldi-mono/ali.txt") + " " + missing,
  };
  for (const std::string& command : commands) {
    EXPECT_EQ(RunCommand(command, log()), 255) << command << "\n" << ReadFile(log());
    EXPECT_NE(ReadFile(log()).find("no/such/folder/out.ark"), std::string::npos) << command << "\n"
                                                                                 << ReadFile(log());
  }
  // A full device.
  EXPECT_EQ(RunCommand(tool("gmm-boost-silence") + " 1 " + Model() + " /dev/full", log()), 255)
      << ReadFile(log());
}

}  // namespace
}  // namespace gmmscore::testing

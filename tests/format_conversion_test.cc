// Every format written and read back scores like the original: the real Kaldi model through
// Kaldi text, HTK, Sphinx and native files, and `gmmscore convert` / `info` / `score` as a user
// runs them, including a feature dimension that does not match the model.
#include <gtest/gtest.h>

#include <cstdlib>

#include "formats/model_io.h"
#include "kernels/cpu/reference_scorer.h"
#include "tests/test_util.h"

namespace gmmscore {
namespace {

using testing::DataPath;
using testing::ReadTable;
using testing::TempDir;

int RunCli(const std::string& args, const std::string& output_file = "/dev/null") {
  const std::string cmd = std::string(GMMSCORE_CLI) + " " + args + " >" + output_file + " 2>&1";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(FormatConversion, EveryFormatScoresLikeTheOriginal) {
  auto original = LoadModel(DataPath("kaldi-mono/final.mdl"));
  ASSERT_TRUE(original.ok()) << original.status();
  const auto feats = ReadTable("ark:" + DataPath("kaldi-mono/feats.ark"));
  const Matrix& x = feats.begin()->second;
  const std::vector<double> expected = ReferenceScores(original->model, x);
  TempDir dir;
  for (ModelFormat format : {ModelFormat::kKaldiBinary, ModelFormat::kKaldiText, ModelFormat::kHtk,
                             ModelFormat::kSphinx, ModelFormat::kNative}) {
    const std::string path = dir.file("model." + ModelFormatName(format));
    ASSERT_TRUE(SaveModel(original->model, path, format).ok()) << ModelFormatName(format);
    auto back = LoadModel(path);
    ASSERT_TRUE(back.ok()) << ModelFormatName(format) << ": " << back.status();
    EXPECT_EQ(back->file_format, format);
    ASSERT_EQ(back->model.num_states(), original->model.num_states());
    const std::vector<double> got = ReferenceScores(back->model, x);
    double worst = 0.0;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - expected[i]));
    EXPECT_LT(worst, 1e-4) << ModelFormatName(format);
  }
}

TEST(CommandLine, ConvertInfoAndScoreThroughEachFormat) {
  TempDir dir;
  const std::string mdl = DataPath("kaldi-mono/final.mdl");
  ASSERT_EQ(RunCli("convert " + mdl + " " + dir.file("m.gmms")), 0);
  ASSERT_EQ(RunCli("convert " + dir.file("m.gmms") + " " + dir.file("m.mmf")), 0);
  ASSERT_EQ(RunCli("info " + dir.file("m.mmf"), dir.file("info.txt")), 0);
  const std::string info = testing::ReadFile(dir.file("info.txt"));
  EXPECT_NE(info.find("states:           56"), std::string::npos) << info;
  EXPECT_NE(info.find("677 total, 1 min, 53 max"), std::string::npos) << info;
  EXPECT_NE(info.find("file format:      htk"), std::string::npos) << info;
  ASSERT_EQ(RunCli("score --quiet --model " + dir.file("m.mmf") + " --feats ark:" +
                   DataPath("kaldi-mono/feats.ark") + " --out ark:" + dir.file("s.ark")),
            0);
  const auto ours = ReadTable("ark:" + dir.file("s.ark"));
  const auto kaldi = ReadTable("ark:" + DataPath("kaldi-mono/loglikes.ark"));
  ASSERT_EQ(ours.size(), 6u);
  for (const auto& [key, m] : kaldi) {
    for (size_t i = 0; i < m.data.size(); ++i) ASSERT_NEAR(ours.at(key).data[i], m.data[i], 5e-3);
  }
}

TEST(CommandLine, FusionOfTwoCopiesWithLogAddIsTheModelItself) {
  TempDir dir;
  const std::string mdl = DataPath("kaldi-mono/final.mdl");
  ASSERT_EQ(RunCli("score --quiet --model " + mdl + " --model " + mdl +
                   " --fusion log-add --weights 0.5,0.5 --feats ark:" +
                   DataPath("kaldi-mono/feats.ark") + " --out ark:" + dir.file("f.ark")),
            0);
  const auto fused = ReadTable("ark:" + dir.file("f.ark"));
  const auto kaldi = ReadTable("ark:" + DataPath("kaldi-mono/loglikes.ark"));
  for (const auto& [key, m] : kaldi) {
    for (size_t i = 0; i < m.data.size(); ++i) ASSERT_NEAR(fused.at(key).data[i], m.data[i], 5e-3);
  }
}

TEST(CommandLine, ClearErrorsForBadInput) {
  TempDir dir;
  const std::string mdl = DataPath("kaldi-mono/final.mdl");
  // 13-dimensional features against the 39-dimensional model.
  {
    auto writer = MatrixTableWriter::Open("ark:" + dir.file("f13.ark"));
    ASSERT_TRUE((*writer)->Write("utt13", Matrix(5, 13)).ok());
  }
  EXPECT_EQ(RunCli("score --model " + mdl + " --feats ark:" + dir.file("f13.ark") +
                       " --out ark:" + dir.file("o.ark"),
                   dir.file("err.txt")),
            255);
  const std::string err = testing::ReadFile(dir.file("err.txt"));
  EXPECT_NE(err.find("utterance utt13: features have dimension 13, the model 39"),
            std::string::npos)
      << err;
  EXPECT_EQ(RunCli("score --model " + dir.file("missing.mdl") + " --feats ark:x --out ark:y",
                   dir.file("err2.txt")),
            255);
  EXPECT_NE(testing::ReadFile(dir.file("err2.txt")).find("missing.mdl: cannot open"),
            std::string::npos);
  // Errors exit 255, as Kaldi's tools; an unknown subcommand is gmmscore's own usage error.
  EXPECT_EQ(RunCli("score --model " + mdl + " --feats feats.ark --out ark:y"), 255);
  EXPECT_EQ(RunCli("score --bogus"), 255);
  EXPECT_EQ(RunCli("frobnicate"), 2);
}

}  // namespace
}  // namespace gmmscore

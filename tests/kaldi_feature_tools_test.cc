// Kaldi's feature-table tools under their Kaldi names (gmmscore kaldi-links), on what real Kaldi
// made (tests/data/kaldi-tri-feats): compute-cmvn-stats, apply-cmvn, add-deltas and subset-feats
// give Kaldi's archives byte for byte, feat-to-len and feat-to-dim Kaldi's text; errors exit 255
// naming what is wrong, and an utterance without statistics is a warning, as in Kaldi.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "formats/double_matrix_table.h"
#include "tests/test_util.h"

namespace gmmscore::testing {
namespace {

std::string Data(const std::string& name) { return DataPath("kaldi-tri-feats/" + name); }

class KaldiFeatureToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(
        RunCommand(std::string(GMMSCORE_CLI) + " kaldi-links " + dir_.file("bin") + " >/dev/null",
                   log()),
        0)
        << ReadFile(log());
  }
  // A Kaldi tool of the links folder, without the command line echoed.
  std::string Tool(const std::string& name) const {
    return dir_.file("bin/" + name) + " --print-args=false";
  }
  std::string file(const std::string& name) const { return dir_.file(name); }
  std::string log() const { return dir_.file("log"); }

  TempDir dir_;
};

TEST_F(KaldiFeatureToolsTest, CmvnAndDeltasAreKaldisBytes) {
  // steps/compute_cmvn_stats.sh
  ASSERT_EQ(RunCommand(Tool("compute-cmvn-stats") + " --spk2utt=ark:" + Data("spk2utt") +
                           " ark:" + Data("feats.ark") + " ark:" + file("cmvn.ark"),
                       log()),
            0)
      << ReadFile(log());
  EXPECT_NE(ReadFile(log()).find("Done accumulating CMVN stats for 102 utterances; 0 had errors."),
            std::string::npos)
      << ReadFile(log());
  EXPECT_EQ(ReadFile(file("cmvn.ark")), ReadFile(Data("cmvn.ark")));
  // train_deltas.sh's features.
  ASSERT_EQ(
      RunCommand(Tool("apply-cmvn") + " --utt2spk=ark:" + Data("utt2spk") +
                     " ark:" + Data("cmvn.ark") + " ark:" + Data("feats.ark") + " ark:- | " +
                     Tool("subset-feats") + " --include=" + Data("subset.list") +
                     " ark:- ark:- | " + Tool("add-deltas") + " ark:- ark:" + file("delta.ark"),
                 log()),
      0)
      << ReadFile(log());
  EXPECT_EQ(ReadFile(file("delta.ark")), ReadFile(Data("feats_delta.sub.ark")));
  // Per-utterance statistics (no --spk2utt), global statistics to a file, and their use.
  ASSERT_EQ(RunCommand(Tool("compute-cmvn-stats") + " ark:" + Data("feats.ark") +
                           " ark,t:" + file("utt.txt") + " && " + Tool("compute-cmvn-stats") +
                           " ark:" + Data("feats.ark") + " " + file("global.mat") + " && " +
                           Tool("apply-cmvn") + " --norm-vars=true " + file("global.mat") +
                           " ark:" + Data("feats.ark") + " ark:/dev/null",
                       log()),
            0)
      << ReadFile(log());
  EXPECT_NE(ReadFile(log()).find("Applied cepstral mean and variance normalization to 102"),
            std::string::npos)
      << ReadFile(log());
}

// apply-cmvn --reverse: x * stddev + mean per dimension, the two rounded to float and applied in
// float (Kaldi's ApplyCmvnReverse), so it undoes apply-cmvn up to float rounding; without
// --norm-vars only the mean is added.
TEST_F(KaldiFeatureToolsTest, ApplyCmvnReverseUndoesIt) {
  ASSERT_EQ(
      RunCommand(Tool("compute-cmvn-stats") + " ark:" + Data("feats.ark") + " " +
                     file("global.mat") + " && " + Tool("apply-cmvn") + " --norm-vars=true " +
                     file("global.mat") + " ark:" + Data("feats.ark") + " ark:" + file("norm.ark") +
                     " && " + Tool("apply-cmvn") + " --norm-vars=true --reverse=true " +
                     file("global.mat") + " ark:" + file("norm.ark") + " ark:" + file("back.ark") +
                     " && " + Tool("apply-cmvn") + " --reverse " + file("global.mat") +
                     " ark:" + file("norm.ark") + " ark:" + file("plus_mean.ark"),
                 log()),
      0)
      << ReadFile(log());
  const std::map<std::string, Matrix> feats = ReadTable("ark:" + Data("feats.ark"));
  const std::map<std::string, Matrix> norm = ReadTable("ark:" + file("norm.ark"));
  const std::map<std::string, Matrix> back = ReadTable("ark:" + file("back.ark"));
  const std::map<std::string, Matrix> plus_mean = ReadTable("ark:" + file("plus_mean.ark"));
  ASSERT_EQ(back.size(), feats.size());
  ASSERT_EQ(plus_mean.size(), feats.size());
  // The global statistics: count, sums, sums of squares.
  const absl::StatusOr<DoubleMatrix> stats = ReadDoubleMatrixFile(file("global.mat"));
  ASSERT_TRUE(stats.ok()) << stats.status();
  const int32_t dim = feats.begin()->second.cols;
  ASSERT_EQ(stats->cols, dim + 1);
  const double count = stats->data[size_t(dim)];
  EXPECT_EQ(count, 28389.0);
  auto sum = [&](int32_t d) { return stats->data[size_t(d)]; };
  auto sum_sq = [&](int32_t d) { return stats->data[size_t(stats->cols + d)]; };
  // compute-cmvn-stats' global statistics: Kaldi's Matrix<double>, accumulated frame by frame
  // (the products in float, the sums in double).
  std::vector<double> frame_sum(size_t(dim), 0.0), frame_sum_sq(size_t(dim), 0.0);
  for (const auto& [utt, m] : feats) {
    for (int32_t t = 0; t < m.rows; ++t) {
      for (int32_t d = 0; d < dim; ++d) {
        const float x = m.row(t)[d];
        frame_sum[size_t(d)] += x;
        frame_sum_sq[size_t(d)] += x * x;
      }
    }
  }
  for (int32_t d = 0; d < dim; ++d) {
    EXPECT_EQ(sum(d), frame_sum[size_t(d)]) << d;
    EXPECT_EQ(sum_sq(d), frame_sum_sq[size_t(d)]) << d;
  }
  double worst = 0.0;
  for (const auto& [utt, m] : feats) {
    const Matrix& n = norm.at(utt);
    for (int32_t t = 0; t < m.rows; ++t) {
      for (int32_t d = 0; d < dim; ++d) {
        const double mean = sum(d) / count;
        const float stddev = float(std::sqrt(sum_sq(d) / count - mean * mean));
        const float x = n.row(t)[d];
        EXPECT_EQ(back.at(utt).row(t)[d], x * stddev + float(mean)) << utt << " " << t << " " << d;
        EXPECT_EQ(plus_mean.at(utt).row(t)[d], x + float(mean)) << utt << " " << t << " " << d;
        worst = std::max(worst, std::abs(double(back.at(utt).row(t)[d]) - m.row(t)[d]) /
                                    (1.0 + std::abs(double(m.row(t)[d]))));
      }
    }
  }
  EXPECT_LT(worst, 1e-5);
}

// make_mfcc.sh's copy-feats --compress=true --write-num-frames: Kaldi's compressed archive (the
// features decompressed and compressed again give Kaldi's bytes for all 102 utterances) and its
// utt2num_frames; --compress=false writes the decompressed values in full.
TEST_F(KaldiFeatureToolsTest, CopyFeatsCompressesAsKaldi) {
  ASSERT_EQ(RunCommand(Tool("copy-feats") + " --compress=true --write-num-frames=ark,t:" +
                           file("utt2num_frames") + " ark:" + Data("feats.ark") +
                           " ark,scp:" + file("raw.ark") + "," + file("raw.scp"),
                       log()),
            0)
      << ReadFile(log());
  EXPECT_NE(ReadFile(log()).find("LOG (copy-feats) Copied 102 feature matrices."),
            std::string::npos);
  EXPECT_EQ(ReadFile(file("raw.ark")), ReadFile(Data("feats.ark")));
  EXPECT_EQ(ReadFile(file("utt2num_frames")), ReadFile(Data("utt2num_frames")));
  // Full matrices, then compressed again through a pipe and a script.
  ASSERT_EQ(RunCommand(Tool("copy-feats") + " scp:" + file("raw.scp") + " ark:" + file("full.ark") +
                           " && " + Tool("copy-feats") + " --compress=true ark:" +
                           file("full.ark") + " ark:- | cat > " + file("again.ark"),
                       log()),
            0)
      << ReadFile(log());
  EXPECT_GT(ReadFile(file("full.ark")).size(), ReadFile(Data("feats.ark")).size() * 3);
  EXPECT_EQ(ReadFile(file("again.ark")), ReadFile(Data("feats.ark")));
  EXPECT_EQ(RunCommand(Tool("copy-feats") + " --compression-method=9 ark:" + Data("feats.ark") +
                           " ark:/dev/null",
                       log()),
            255);
}

TEST_F(KaldiFeatureToolsTest, LengthsDimsAndSubsets) {
  ASSERT_EQ(RunCommand(Tool("feat-to-len") + " ark:" + Data("feats.ark") +
                           " ark,t:" + file("utt2num_frames"),
                       log()),
            0);
  EXPECT_EQ(ReadFile(file("utt2num_frames")), ReadFile(Data("utt2num_frames")));
  ASSERT_EQ(RunCommand(Tool("feat-to-len") + " ark:" + Data("feats.ark") + " >" + file("total") +
                           " && " + Tool("feat-to-dim") + " ark:" + Data("feats.ark") + " - >" +
                           file("dim") + " && " + Tool("feat-to-dim") +
                           " ark:" + Data("feats.ark") + " ark,t:- | head -1 >" + file("dims"),
                       log()),
            0)
      << ReadFile(log());
  EXPECT_EQ(ReadFile(file("total")), "28389\n");
  EXPECT_EQ(ReadFile(file("dim")), "13\n");
  EXPECT_EQ(ReadFile(file("dims")), "egbf2-001 13 \n");
  ASSERT_EQ(RunCommand(Tool("subset-feats") + " --n=2 ark:" + Data("feats.ark") + " ark:- | " +
                           Tool("feat-to-len") + " ark:- ark,t:" + file("two"),
                       log()),
            0);
  EXPECT_EQ(ReadFile(file("two")), "egbf2-001 284 \negbf2-002 159 \n");
  std::ofstream(file("exclude")) << "egbf2-001\n";
  ASSERT_EQ(RunCommand(Tool("subset-feats") + " --exclude=" + file("exclude") +
                           " ark:" + Data("feats.ark") + " ark:- | " + Tool("feat-to-len") +
                           " ark:- >" + file("rest"),
                       log()),
            0);
  EXPECT_EQ(ReadFile(file("rest")), "28105\n");  // all but egbf2-001's 284 frames
}

TEST_F(KaldiFeatureToolsTest, ErrorsAndWarningsAsKaldis) {
  // An utterance whose speaker has no statistics: a warning, no output for it.
  std::ofstream(file("utt2spk")) << "egbf2-001 nobody\n";
  EXPECT_EQ(RunCommand(Tool("apply-cmvn") + " --utt2spk=ark:" + file("utt2spk") + " ark:" +
                           Data("cmvn.ark") + " ark:" + Data("feats.ark") + " ark:/dev/null",
                       log()),
            1);
  EXPECT_NE(ReadFile(log()).find("WARNING (apply-cmvn) No normalization statistics available for "
                                 "key egbf2-001"),
            std::string::npos)
      << ReadFile(log());
  // Statistics of another dimension: an error naming the utterance.
  EXPECT_EQ(RunCommand(Tool("apply-cmvn") + " --utt2spk=ark:" + Data("utt2spk") +
                           " ark:" + Data("cmvn.ark") + " ark:" + Data("feats_delta.sub.ark") +
                           " ark:/dev/null",
                       log()),
            255);
  EXPECT_NE(ReadFile(log()).find("egbf2-001: Dim mismatch"), std::string::npos) << ReadFile(log());
  // Options Kaldi refuses.
  EXPECT_EQ(RunCommand(Tool("apply-cmvn") + " --norm-vars=true --norm-means=false a b c", log()),
            255);
  EXPECT_EQ(RunCommand(Tool("compute-cmvn-stats") + " --spk2utt=ark:" + Data("spk2utt") +
                           " ark:" + Data("feats.ark") + " " + file("global.mat"),
                       log()),
            255);
  EXPECT_NE(ReadFile(log()).find("did you forget ark:?"), std::string::npos);
  EXPECT_EQ(RunCommand(Tool("subset-feats") + " --n=0 ark:" + Data("feats.ark") + " ark:-", log()),
            255);
  EXPECT_EQ(
      RunCommand(Tool("add-deltas") + " --truncate=20 ark:" + Data("feats.ark") + " ark:/dev/null",
                 log()),
      255);
  EXPECT_EQ(RunCommand(Tool("feat-to-dim") + " ark:/dev/null -", log()), 255);
  EXPECT_NE(ReadFile(log()).find("empty archive"), std::string::npos);
  // A truncated archive: an error naming it, and nothing reported as done.
  const std::string feats = ReadFile(Data("feats.ark"));
  std::ofstream(file("cut.ark"), std::ios::binary) << feats.substr(0, feats.size() / 2);
  EXPECT_EQ(RunCommand(Tool("add-deltas") + " ark:" + file("cut.ark") + " ark:/dev/null", log()),
            255);
  EXPECT_NE(ReadFile(log()).find("cut.ark"), std::string::npos) << ReadFile(log());
  // Unopenable outputs.
  for (const char* tool : {"add-deltas", "subset-feats", "feat-to-len"}) {
    EXPECT_EQ(
        RunCommand(Tool(tool) + " ark:" + Data("feats.ark") + " ark:" + file("no/such/dir/x.ark"),
                   log()),
        255)
        << tool;
    EXPECT_NE(ReadFile(log()).find("no/such/dir/x.ark"), std::string::npos) << tool;
  }
}

}  // namespace
}  // namespace gmmscore::testing

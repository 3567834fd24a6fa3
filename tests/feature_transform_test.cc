// Splicing and feature transforms (feat/splice, feat/feature_transform) against a float64
// reference on random data (dimension 13, one frame, odd sizes), and splice-feats and
// transform-feats under their Kaldi names on what real Kaldi made (tests/data/kaldi-tri-feats):
// tri2b's LDA+MLLT features and tri3b's per-speaker fMLLR features to Kaldi's within the last
// bits of a float (Kaldi's sgemm sums in its BLAS's blocked order), Kaldi's log lines, warnings
// and exit statuses.
#include "feat/feature_transform.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "feat/splice.h"
#include "tests/test_util.h"

namespace gmmscore::testing {
namespace {

Matrix Random(int32_t rows, int32_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  Matrix m(rows, cols);
  for (float& v : m.data) v = normal(rng);
  return m;
}

TEST(SpliceFrames, NeighboursSideBySideEdgesRepeated) {
  Matrix in(3, 2);
  for (int32_t t = 0; t < 3; ++t) {
    in.at(t, 0) = float(t);
    in.at(t, 1) = 10.0f + float(t);
  }
  auto out = SpliceFrames(in, 2, 1);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->rows, 3);
  ASSERT_EQ(out->cols, 8);
  // Frame t holds frames t-2, t-1, t, t+1, clamped to 0..2.
  const int32_t want[3][4] = {{0, 0, 0, 1}, {0, 0, 1, 2}, {0, 1, 2, 2}};
  for (int32_t t = 0; t < 3; ++t) {
    for (int32_t j = 0; j < 4; ++j) {
      EXPECT_EQ(out->at(t, 2 * j), float(want[t][j])) << t << " " << j;
      EXPECT_EQ(out->at(t, 2 * j + 1), 10.0f + float(want[t][j])) << t << " " << j;
    }
  }
  auto one = SpliceFrames(Random(1, 13, 1), 3, 3);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->cols, 91);
  EXPECT_FALSE(SpliceFrames(Matrix(0, 13), 3, 3).ok());
  EXPECT_FALSE(SpliceFrames(Random(4, 13, 1), -1, 3).ok());
}

TEST(FeatureTransform, LinearAndAffineAgainstFloat64) {
  for (const int32_t frames : {1, 7}) {
    for (const bool affine : {false, true}) {
      const Matrix x = Random(frames, 13, 2);
      const Matrix a = Random(5, 13 + (affine ? 1 : 0), 3);
      ASSERT_EQ(ClassifyTransform(a, 13),
                affine ? TransformShape::kAffine : TransformShape::kLinear);
      auto y = ApplyFeatureTransform(a, x);
      ASSERT_TRUE(y.ok()) << y.status();
      ASSERT_EQ(y->rows, frames);
      ASSERT_EQ(y->cols, 5);
      for (int32_t t = 0; t < frames; ++t) {
        for (int32_t i = 0; i < 5; ++i) {
          double want = affine ? double(a.at(i, 13)) : 0.0, scale = std::abs(want);
          for (int32_t k = 0; k < 13; ++k) {
            want += double(a.at(i, k)) * x.at(t, k);
            scale += std::abs(double(a.at(i, k)) * x.at(t, k));
          }
          EXPECT_NEAR(y->at(t, i), want, 1e-6 * scale) << t << " " << i;
        }
      }
    }
  }
  const absl::StatusOr<Matrix> bad = ApplyFeatureTransform(Random(5, 15, 3), Random(2, 13, 2));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ClassifyTransform(Random(5, 15, 3), 13), TransformShape::kBad);
}

TEST(FeatureTransform, HalfLogDetOfSquareAndReducingTransforms) {
  Matrix square(2, 2);
  square.at(0, 0) = 2.0f;
  square.at(1, 1) = 3.0f;
  square.at(0, 1) = 1.0f;  // det = 6
  EXPECT_NEAR(TransformHalfLogDet(square, 2), std::log(6.0), 1e-12);
  Matrix reducing(2, 4);  // affine, reducing 3 dimensions to 2: A A^T = diag(1, 4)
  reducing.at(0, 0) = 1.0f;
  reducing.at(1, 1) = 2.0f;
  reducing.at(1, 3) = 9.0f;  // the offset column is not part of it
  EXPECT_NEAR(TransformHalfLogDet(reducing, 3), std::log(2.0), 1e-12);
  EXPECT_TRUE(std::isnan(TransformHalfLogDet(Matrix(2, 2), 2)));
}

// A B applies B, then A: for a linear or affine A and B (B's last column an offset where
// b_is_affine), C x equals A (B x) in float64, for frames of one and odd dimensions.
TEST(FeatureTransform, ComposedTransformsApplyBThenA) {
  struct Case {
    int32_t a_cols, b_cols;
    bool b_is_affine;
  };
  // B maps 13 dimensions to 7; A maps 7 to 5.
  for (const Case c : {Case{7, 13, false}, Case{8, 13, false}, Case{8, 14, true}}) {
    const Matrix a = Random(5, c.a_cols, 3), b = Random(7, c.b_cols, 4), x = Random(3, 13, 2);
    auto composed = ComposeTransforms(a, b, c.b_is_affine);
    ASSERT_TRUE(composed.ok()) << composed.status();
    const bool affine = c.a_cols == 8;
    ASSERT_EQ(composed->cols, affine ? 14 : 13);
    auto y = ApplyFeatureTransform(*composed, x);
    ASSERT_TRUE(y.ok()) << y.status();
    for (int32_t t = 0; t < x.rows; ++t) {
      std::vector<double> bx(7);
      for (int32_t j = 0; j < 7; ++j) {
        bx[size_t(j)] = c.b_is_affine ? b.at(j, 13) : 0.0;
        for (int32_t k = 0; k < 13; ++k) bx[size_t(j)] += double(b.at(j, k)) * x.at(t, k);
      }
      for (int32_t i = 0; i < 5; ++i) {
        double want = affine ? a.at(i, 7) : 0.0;
        for (int32_t j = 0; j < 7; ++j) want += double(a.at(i, j)) * bx[size_t(j)];
        EXPECT_NEAR(y->at(t, i), want, 1e-5 * (1.0 + std::abs(want))) << t << " " << i;
      }
    }
  }
  EXPECT_EQ(ComposeTransforms(Random(5, 9, 3), Random(7, 13, 4), false).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(ComposeTransforms(Random(5, 8, 3), Matrix(), false).ok());
}

std::string Data(const std::string& name) { return DataPath("kaldi-tri-feats/" + name); }

// Every value of got within the rounding of Kaldi's float sums (the largest difference measured is
// 4.8e-6, where terms of magnitude 10 cancel), keys and shapes the same.
void ExpectWithinFloatRounding(const std::string& got_path, const std::string& kaldi_path) {
  const auto got = ReadTable("ark:" + got_path), kaldi = ReadTable("ark:" + kaldi_path);
  ASSERT_EQ(got.size(), kaldi.size());
  ASSERT_EQ(kaldi.size(), 9u);
  for (const auto& [key, want] : kaldi) {
    ASSERT_TRUE(got.count(key)) << key;
    const Matrix& m = got.at(key);
    ASSERT_EQ(m.rows, want.rows) << key;
    ASSERT_EQ(m.cols, want.cols) << key;
    for (size_t i = 0; i < want.data.size(); ++i) {
      ASSERT_NEAR(m.data[i], want.data[i], 1e-5) << key << " value " << i;
    }
  }
}

class TransformToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(
        RunCommand(std::string(GMMSCORE_CLI) + " kaldi-links " + dir_.file("bin") + " >/dev/null",
                   log()),
        0)
        << ReadFile(log());
  }
  std::string Tool(const std::string& name) const {
    return dir_.file("bin/" + name) + " --print-args=false";
  }
  // The features an LDA+MLLT model reads, as align_si.sh pipes them, of the 9 utterances.
  std::string LdaPipeline() const {
    return Tool("apply-cmvn") + " --utt2spk=ark:" + Data("utt2spk") + " ark:" + Data("cmvn.ark") +
           " ark:" + Data("feats.ark") + " ark:- | " + Tool("subset-feats") +
           " --include=" + Data("subset.list") + " ark:- ark:- | " + Tool("splice-feats") +
           " --left-context=3 --right-context=3 ark:- ark:- | " + Tool("transform-feats") + " " +
           Data("final.mat") + " ark:- ark:-";
  }
  std::string file(const std::string& name) const { return dir_.file(name); }
  std::string log() const { return dir_.file("log"); }

  TempDir dir_;
};

TEST_F(TransformToolsTest, LdaMlltAndFmllrFeaturesAreKaldis) {
  ASSERT_EQ(RunCommand(LdaPipeline() + " > " + file("lda.ark"), log()), 0) << ReadFile(log());
  EXPECT_NE(ReadFile(log()).find("LOG (transform-feats) Overall average [pseudo-]logdet is "
                                 "-99.2125 over 2021 frames."),
            std::string::npos)
      << ReadFile(log());
  EXPECT_NE(ReadFile(log()).find("Applied transform to 9 utterances; 0 had errors."),
            std::string::npos);
  ExpectWithinFloatRounding(file("lda.ark"), Data("feats_lda_tri2b.sub.ark"));
  // tri3b's speaker-adapted features: the affine fMLLR transforms by speaker.
  ASSERT_EQ(RunCommand(Tool("transform-feats") + " --utt2spk=ark:" + Data("utt2spk") +
                           " ark:" + Data("trans_tri3b.ark") + " ark:" + file("lda.ark") +
                           " ark:" + file("fmllr.ark"),
                       log()),
            0)
      << ReadFile(log());
  EXPECT_NE(ReadFile(log()).find("Overall average logdet is 3.57525 over 2021 frames."),
            std::string::npos)
      << ReadFile(log());
  ExpectWithinFloatRounding(file("fmllr.ark"), Data("feats_fmllr_tri3b.sub.ark"));
}

// decode_fmllr.sh composes its transforms: the fMLLR transforms by speaker composed with the
// LDA+MLLT matrix are one affine transform of the spliced features, which gives Kaldi's
// speaker-adapted features; mixed tables and files, and a mismatch, as Kaldi's tool takes them.
TEST_F(TransformToolsTest, ComposedTransformsGiveKaldisAdaptedFeatures) {
  ASSERT_EQ(RunCommand(Tool("compose-transforms") + " ark:" + Data("trans_tri3b.ark") + " " +
                           Data("final.mat") + " ark:" + file("composed.ark"),
                       log()),
            0)
      << ReadFile(log());
  ASSERT_EQ(RunCommand(Tool("apply-cmvn") + " --utt2spk=ark:" + Data("utt2spk") +
                           " ark:" + Data("cmvn.ark") + " ark:" + Data("feats.ark") + " ark:- | " +
                           Tool("subset-feats") + " --include=" + Data("subset.list") +
                           " ark:- ark:- | " + Tool("splice-feats") +
                           " --left-context=3 --right-context=3 ark:- ark:- | " +
                           Tool("transform-feats") + " --utt2spk=ark:" + Data("utt2spk") +
                           " ark:" + file("composed.ark") + " ark:- ark:" + file("fmllr.ark"),
                       log()),
            0)
      << ReadFile(log());
  // Measured: within 5.8e-6 of Kaldi's two-step features.
  ExpectWithinFloatRounding(file("fmllr.ark"), Data("feats_fmllr_tri3b.sub.ark"));
  // Two files give a file; a table and a file must give a table.
  EXPECT_EQ(RunCommand(Tool("compose-transforms") + " " + Data("final.mat") + " " +
                           Data("final.mat") + " " + file("c.mat"),
                       log()),
            255);
  EXPECT_NE(ReadFile(log()).find("mismatched dimensions, a has 91 columns and b has 40 rows"),
            std::string::npos)
      << ReadFile(log());
  EXPECT_EQ(RunCommand(Tool("compose-transforms") + " ark:" + Data("trans_tri3b.ark") + " " +
                           Data("final.mat") + " " + file("c.mat"),
                       log()),
            255);
  EXPECT_NE(ReadFile(log()).find("Formats of the input and output"), std::string::npos)
      << ReadFile(log());
}

TEST_F(TransformToolsTest, MissingTransformsWarnAndBadInputsExit) {
  ASSERT_EQ(RunCommand(LdaPipeline() + " > " + file("lda.ark"), log()), 0) << ReadFile(log());
  // Per-utterance lookup of per-speaker transforms (no --utt2spk): none found, no output, exit 1.
  EXPECT_EQ(RunCommand(Tool("transform-feats") + " ark:" + Data("trans_tri3b.ark") +
                           " ark:" + file("lda.ark") + " ark:" + file("none.ark"),
                       log()),
            1);
  EXPECT_NE(ReadFile(log()).find("WARNING (transform-feats) No fMLLR transform available for "
                                 "utterance"),
            std::string::npos)
      << ReadFile(log());
  EXPECT_NE(ReadFile(log()).find("Applied transform to 0 utterances; 9 had errors."),
            std::string::npos);
  // The LDA matrix on features it does not fit: a warning per utterance.
  EXPECT_EQ(RunCommand(Tool("transform-feats") + " " + Data("final.mat") +
                           " ark:" + file("lda.ark") + " ark:" + file("bad.ark"),
                       log()),
            1);
  EXPECT_NE(ReadFile(log()).find("has bad dimension 40x91 versus feat dim 40"), std::string::npos)
      << ReadFile(log());
  // Unopenable output, missing matrix, an empty matrix to splice: errors, exit 255.
  EXPECT_EQ(RunCommand(Tool("transform-feats") + " " + Data("final.mat") +
                           " ark:" + Data("feats.ark") + " ark:" + file("no/such/dir/x.ark"),
                       log()),
            255);
  EXPECT_EQ(RunCommand(Tool("transform-feats") + " " + file("missing.mat") +
                           " ark:" + Data("feats.ark") + " ark:/dev/null",
                       log()),
            255);
  EXPECT_NE(ReadFile(log()).find("missing.mat"), std::string::npos) << ReadFile(log());
  EXPECT_EQ(RunCommand(Tool("splice-feats") + " ark:" + Data("feats.ark") +
                           " ark:" + file("no/such/dir/x.ark"),
                       log()),
            255);
  EXPECT_EQ(RunCommand(Tool("splice-feats") + " --left-context=-1 ark:" + Data("feats.ark") +
                           " ark:/dev/null",
                       log()),
            255);
}

}  // namespace
}  // namespace gmmscore::testing

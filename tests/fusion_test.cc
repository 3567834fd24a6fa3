#include "model/fusion.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gmmscore {
namespace {

Matrix Make(int32_t rows, int32_t cols, std::vector<float> values) {
  Matrix m(rows, cols);
  m.data = std::move(values);
  return m;
}

TEST(Fusion, MaxLogLinearLogAdd) {
  const Matrix a = Make(1, 2, {-10.0f, -20.0f});
  const Matrix b = Make(1, 2, {-12.0f, -15.0f});
  Matrix out;
  FusionSpec spec;
  spec.rule = FusionRule::kMax;
  ASSERT_TRUE(ValidateFusion(&spec, 2).ok());
  ASSERT_TRUE(FuseScores(spec, {&a, &b}, &out).ok());
  EXPECT_EQ(out.data, (std::vector<float>{-10.0f, -15.0f}));

  spec.rule = FusionRule::kLogLinear;
  spec.weights = {0.25f, 0.75f};
  ASSERT_TRUE(FuseScores(spec, {&a, &b}, &out).ok());
  EXPECT_FLOAT_EQ(out.at(0, 0), 0.25f * -10.0f + 0.75f * -12.0f);
  EXPECT_FLOAT_EQ(out.at(0, 1), 0.25f * -20.0f + 0.75f * -15.0f);

  spec.rule = FusionRule::kLogAdd;
  ASSERT_TRUE(ValidateFusion(&spec, 2).ok());
  ASSERT_TRUE(FuseScores(spec, {&a, &b}, &out).ok());
  EXPECT_NEAR(out.at(0, 0), std::log(0.25 * std::exp(-10.0) + 0.75 * std::exp(-12.0)), 1e-5);
  EXPECT_NEAR(out.at(0, 1), std::log(0.25 * std::exp(-20.0) + 0.75 * std::exp(-15.0)), 1e-5);
}

TEST(Fusion, SelectBestFollowsTheSlidingWindow) {
  // Model a is better for frames 0-3, model b from frame 4 on; with a 2-frame window the
  // choice switches at frame 5: at frame 4, a has -1 - 10 = -11 against b -10 - 3 = -13.
  std::vector<float> av, bv;
  for (int t = 0; t < 8; ++t) {
    av.insert(av.end(), {t < 4 ? -1.0f : -10.0f, -50.0f});
    bv.insert(bv.end(), {t < 4 ? -10.0f : -3.0f, -50.0f});
  }
  const Matrix a = Make(8, 2, av), b = Make(8, 2, bv);
  FusionSpec spec;
  spec.rule = FusionRule::kSelectBest;
  spec.select_window = 2;
  ASSERT_TRUE(ValidateFusion(&spec, 2).ok());
  Matrix out;
  std::vector<int32_t> selected;
  ASSERT_TRUE(FuseScores(spec, {&a, &b}, &out, &selected).ok());
  EXPECT_EQ(selected, (std::vector<int32_t>{0, 0, 0, 0, 0, 1, 1, 1}));
  spec.select_window = 4;
  ASSERT_TRUE(FuseScores(spec, {&a, &b}, &out, &selected).ok());
  // Window 4 at frame 4: a = -1-1-1-10 = -13, b = -10-10-10-3 = -33: still a; frame 5: a -22
  // vs b -26: a; frame 6: a -31 vs b -19: b.
  EXPECT_EQ(selected, (std::vector<int32_t>{0, 0, 0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(out.at(5, 0), -10.0f);
  EXPECT_EQ(out.at(6, 0), -3.0f);
}

TEST(Fusion, RejectsBadWeightsAndShapes) {
  FusionSpec spec;
  spec.rule = FusionRule::kLogAdd;
  spec.weights = {0.5f, 0.6f};
  EXPECT_FALSE(ValidateFusion(&spec, 2).ok());
  spec.weights = {1.0f};
  EXPECT_FALSE(ValidateFusion(&spec, 2).ok());
  spec.weights = {-0.5f, 1.5f};
  EXPECT_FALSE(ValidateFusion(&spec, 2).ok());
  EXPECT_FALSE(ParseFusionRule("median").ok());
  const Matrix a(2, 3), b(2, 4);
  spec.rule = FusionRule::kMax;
  spec.weights = {0.5f, 0.5f};
  Matrix out;
  EXPECT_FALSE(FuseScores(spec, {&a, &b}, &out).ok());
}

}  // namespace
}  // namespace gmmscore

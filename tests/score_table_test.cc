// ScoreTable (gmmscore score --devices): several scorers at once, the output in input order.
#include "tools/score_table.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

#include "model/random_model.h"
#include "tests/test_util.h"

namespace gmmscore {
namespace {

// Utterances "u0", "u1", ... of 1 to 20 frames of dimension 3.
class SyntheticReader : public MatrixTableReader {
 public:
  explicit SyntheticReader(int count) : count_(count) {}
  absl::StatusOr<bool> Next(std::string* key, Matrix* value) override {
    if (next_ == count_) return false;
    *key = "u" + std::to_string(next_);
    *value = RandomFeatures(1 + next_ % 20, 3, 0.0f, 1.0f, uint32_t(next_));
    ++next_;
    return true;
  }

 private:
  const int count_;
  int next_ = 0;
};

// "Scores" an utterance as its features plus the scorer's number, after a delay that varies
// from utterance to utterance, so that scorers finish out of order; fails on "u13" if asked.
class SlowScorer : public FusedScorer {
 public:
  SlowScorer(int number, bool fail) : number_(number), fail_(fail) {}
  std::string name() const override { return "slow"; }
  absl::Status Score(const Matrix& feats, Matrix* fused) const override {
    std::this_thread::sleep_for(std::chrono::microseconds(200 * ((feats.rows * 7) % 5)));
    if (fail_ && feats.rows == 14) return absl::InternalError("device lost");
    *fused = feats;
    for (float& x : fused->data) x += float(number_);
    ++calls;
    return absl::OkStatus();
  }
  mutable std::atomic<int> calls{0};

 private:
  const int number_;
  const bool fail_;
};

std::vector<std::unique_ptr<FusedScorer>> Scorers(int count, bool fail) {
  std::vector<std::unique_ptr<FusedScorer>> scorers;
  for (int i = 0; i < count; ++i) scorers.push_back(std::make_unique<SlowScorer>(i, fail));
  return scorers;
}

TEST(ScoreTableTest, SeveralScorersWriteInInputOrder) {
  testing::TempDir dir;
  for (int scorer_count : {1, 3}) {
    const std::string out = dir.file("out" + std::to_string(scorer_count) + ".ark");
    SyntheticReader reader(60);
    auto writer = MatrixTableWriter::Open("ark:" + out);
    ASSERT_TRUE(writer.ok());
    const auto scorers = Scorers(scorer_count, false);
    int64_t frames = 0;
    ASSERT_TRUE(ScoreTable(&reader, writer->get(), scorers, [&](int64_t f) { frames += f; }).ok());
    ASSERT_TRUE((*writer)->Close().ok());
    // Every utterance once, in order, each scored by one of the scorers.
    SyntheticReader again(60);
    auto table = MatrixTableReader::Open("ark:" + out);
    ASSERT_TRUE(table.ok());
    std::string key, expected_key;
    Matrix value, feats;
    int64_t expected_frames = 0;
    for (int i = 0; i < 60; ++i) {
      ASSERT_TRUE(*again.Next(&expected_key, &feats));
      ASSERT_TRUE(*(*table)->Next(&key, &value));
      EXPECT_EQ(key, expected_key);
      ASSERT_EQ(value.rows, feats.rows);
      const float scorer = std::round(value.data[0] - feats.data[0]);
      EXPECT_TRUE(scorer >= 0.0f && scorer < float(scorer_count)) << scorer;
      for (size_t j = 0; j < feats.data.size(); ++j) {
        EXPECT_NEAR(value.data[j], feats.data[j] + scorer, 1e-5) << key;
      }
      expected_frames += feats.rows;
    }
    EXPECT_FALSE(*(*table)->Next(&key, &value));
    EXPECT_EQ(frames, expected_frames);
    int calls = 0;
    for (const auto& s : scorers) calls += static_cast<const SlowScorer&>(*s).calls;
    EXPECT_EQ(calls, 60);
  }
}

TEST(ScoreTableTest, TheFirstErrorStopsItNamingTheUtterance) {
  testing::TempDir dir;
  SyntheticReader reader(60);
  auto writer = MatrixTableWriter::Open("ark:" + dir.file("out.ark"));
  ASSERT_TRUE(writer.ok());
  const absl::Status s = ScoreTable(&reader, writer->get(), Scorers(3, true), [](int64_t) {});
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(s.message(), "utterance u13: device lost");
}

}  // namespace
}  // namespace gmmscore

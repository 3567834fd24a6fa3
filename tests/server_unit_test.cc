// The daemon's parts on their own: binary16 conversion, configuration checks, fusion carried
// across windows, response encoding, the timer queue and the batcher's ordering and batch sizes.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>

#include "kernels/cpu/cpu_scorer.h"
#include "proto/wire_codec.h"
#include "server/batcher.h"
#include "server/config.h"
#include "server/response_encoder.h"
#include "server/stream_fusion.h"
#include "server/timer_queue.h"
#include "tests/random_model.h"

namespace gmmscore::testing {
namespace {

using namespace std::chrono_literals;

TEST(WireCodecTest, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = wire::HalfToFloat(uint16_t(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(wire::HalfToFloat(wire::FloatToHalf(f)))) << h;
    } else {
      EXPECT_EQ(wire::FloatToHalf(f), h) << h;
    }
  }
}

TEST(WireCodecTest, HalfRoundsToNearestEven) {
  EXPECT_EQ(wire::HalfToFloat(wire::FloatToHalf(1.0f)), 1.0f);
  EXPECT_EQ(wire::HalfToFloat(wire::FloatToHalf(-81.37f)), -81.375f);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: to even (1).
  EXPECT_EQ(wire::HalfToFloat(wire::FloatToHalf(1.0f + 0x1p-11f)), 1.0f);
  EXPECT_EQ(wire::HalfToFloat(wire::FloatToHalf(1.0f + 3 * 0x1p-11f)), 1.0f + 0x1p-9f);
  EXPECT_EQ(wire::HalfToFloat(wire::FloatToHalf(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(wire::HalfToFloat(wire::FloatToHalf(65520.0f))));
  EXPECT_TRUE(std::isinf(wire::HalfToFloat(wire::FloatToHalf(-1e30f))));
  EXPECT_EQ(wire::HalfToFloat(wire::FloatToHalf(0x1p-24f)), 0x1p-24f);  // smallest subnormal
  EXPECT_EQ(wire::HalfToFloat(wire::FloatToHalf(0x1p-25f)), 0.0f);      // halfway: to even
  EXPECT_EQ(wire::FloatToHalf(-0.0f), 0x8000);
}

TEST(WireCodecTest, PackedFloatsAreLittleEndian) {
  std::string bytes;
  const float values[2] = {1.0f, -2.0f};
  wire::AppendFloat32(values, &bytes);
  ASSERT_EQ(bytes.size(), 8u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[3]), 0x3f);  // 1.0f = 0x3f800000
  EXPECT_EQ(static_cast<unsigned char>(bytes[2]), 0x80);
  float back[2];
  wire::ReadFloat32(bytes, back);
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_EQ(back[1], -2.0f);
}

TEST(ServerConfigTest, ChecksRangesAndNames) {
  server::ServerConfig c;
  c.plaintext = true;
  EXPECT_TRUE(server::ValidateConfig(c).ok());
  c.stream.default_window_frames = 2000;
  EXPECT_NE(server::ValidateConfig(c).message().find("--window-frames"), std::string::npos);
  c = server::ServerConfig();
  c.plaintext = true;
  c.tls_cert_file = "x";
  EXPECT_FALSE(server::ValidateConfig(c).ok());
  server::ModelSpec spec;
  EXPECT_TRUE(server::ParseModelSpec("mono=/a/b=c.mdl", &spec).ok());
  EXPECT_EQ(spec.name, "mono");
  EXPECT_EQ(spec.path, "/a/b=c.mdl");
  EXPECT_FALSE(server::ParseModelSpec("noequals", &spec).ok());
  EXPECT_FALSE(server::ParseModelSpec("bad/name=x", &spec).ok());
  EXPECT_FALSE(server::ParseModelSpec("x=", &spec).ok());
}

TEST(StreamFusionTest, SelectAcrossWindowsEqualsTheWholeUtterance) {
  const Matrix a = RandomFeatures(97, 20, -60.0f, 10.0f, 1);
  const Matrix b = RandomFeatures(97, 20, -60.0f, 10.0f, 2);
  const Matrix c = RandomFeatures(97, 20, -60.0f, 10.0f, 3);
  FusionSpec spec;
  spec.rule = FusionRule::kSelectBest;
  spec.select_window = 6;
  ASSERT_TRUE(ValidateFusion(&spec, 3).ok());
  Matrix expected;
  ASSERT_TRUE(FuseScores(spec, {&a, &b, &c}, &expected).ok());
  server::StreamFusion fusion(spec, 3);
  Matrix got;
  for (int32_t t = 0, w = 1; t < a.rows; t += w, w = w % 9 + 1) {
    const int32_t n = std::min(w, a.rows - t);
    std::vector<Matrix> parts;
    for (const Matrix* m : {&a, &b, &c}) {
      Matrix p(n, m->cols);
      std::copy_n(m->row(t), size_t(n) * m->cols, p.data.data());
      parts.push_back(std::move(p));
    }
    Matrix out;
    ASSERT_TRUE(fusion.Fuse(parts, &out).ok());
    got.data.insert(got.data.end(), out.data.begin(), out.data.end());
  }
  EXPECT_EQ(got.data, expected.data);
}

TEST(ResponseEncoderTest, SparseKeepsTiesInStateOrderAndBestFirst) {
  Matrix scores(1, 6);
  scores.data = {-5.0f, -1.0f, -3.0f, -1.0f, -20.0f, -2.0f};
  server::EncoderOptions o;
  o.encoding = v1::StreamConfig::BEAM_SPARSE;
  o.beam = 3.0f;
  o.max_states = 3;
  server::ResponseEncoder encoder(o);
  v1::ScoreResponse r;
  encoder.Encode(scores, &r);
  ASSERT_EQ(r.sparse_counts_size(), 1);
  EXPECT_EQ(r.sparse_counts(0), 3u);
  int32_t ids[3];
  float values[3];
  wire::ReadInt32(r.sparse_states(), ids);
  wire::ReadFloat32(r.scores(), values);
  EXPECT_EQ(std::vector<int32_t>(ids, ids + 3), (std::vector<int32_t>{1, 3, 5}));
  EXPECT_EQ(std::vector<float>(values, values + 3), (std::vector<float>{-1.0f, -1.0f, -2.0f}));
  EXPECT_EQ(r.best_state(0), 1);
  EXPECT_EQ(r.best_score(0), -1.0f);
}

TEST(TimerQueueTest, RunsInTimeOrder) {
  server::TimerQueue timers;
  std::mutex mu;
  std::vector<int> order;
  const auto now = std::chrono::steady_clock::now();
  for (int i : {3, 1, 2}) {
    timers.Schedule(now + i * 20ms, [&, i] {
      std::lock_guard lock(mu);
      order.push_back(i);
    });
  }
  timers.Schedule(now - 1s, [&] {  // overdue: at once
    std::lock_guard lock(mu);
    order.push_back(0);
  });
  std::this_thread::sleep_for(150ms);
  std::lock_guard lock(mu);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
}

// Records the windows it gets, per stream.
class RecordingSink : public server::WindowSink {
 public:
  void OnWindowScored(server::Window window, absl::StatusOr<std::vector<Matrix>> scores) override {
    std::lock_guard lock(mu);
    EXPECT_TRUE(scores.ok());
    firsts.push_back(window.first_frame);
    rows += window.feats.rows;
    if (scores.ok()) {
      EXPECT_EQ((*scores)[0].rows, window.feats.rows);
    }
  }
  std::mutex mu;
  std::vector<int64_t> firsts;
  int64_t rows = 0;
};

TEST(BatcherTest, KeepsEachStreamsOrderAndTheBatchLimit) {
  RandomModelOptions o;
  o.num_states = 30;
  o.dim = 13;
  server::Metrics metrics;
  auto entry = std::make_shared<server::ModelEntry>(
      "m", 1, "mem", "test", std::make_unique<CpuScorer>(RandomModel(o, 1), 1), "cpu", 100, 1,
      &metrics);
  auto set = server::ModelSet::Make({entry});
  server::BatcherOptions options;
  options.max_batch_frames = 40;
  options.max_queue_delay = absl::Milliseconds(1);
  std::vector<std::shared_ptr<RecordingSink>> sinks;
  {
    server::Batcher batcher(options, &metrics);
    for (int s = 0; s < 8; ++s) sinks.push_back(std::make_shared<RecordingSink>());
    for (int64_t w = 0; w < 50; ++w) {
      for (int s = 0; s < 8; ++s) {
        server::Window window;
        window.sink = sinks[size_t(s)];
        window.first_frame = w * 7;
        window.feats = RandomFeatures(7, 13, 0.0f, 3.0f, uint32_t(w * 8 + s));
        batcher.Submit(set, std::move(window));
      }
    }
  }  // the destructor scores what is queued
  for (const auto& sink : sinks) {
    ASSERT_EQ(sink->firsts.size(), 50u);
    for (size_t i = 0; i < 50; ++i) EXPECT_EQ(sink->firsts[i], int64_t(i) * 7);
  }
  // Whole windows of 7 frames: at most 5 (35 frames) fit under 40.
  const auto families = metrics.registry().Collect();
  for (const prometheus::MetricFamily& f : families) {
    if (f.name != "gmmscore_batch_frames") continue;
    const auto& h = f.metric.at(0).histogram;
    EXPECT_EQ(h.sample_sum, 8 * 50 * 7);
    for (const prometheus::ClientMetric::Bucket& b : h.bucket) {
      if (b.upper_bound >= 50) {
        EXPECT_EQ(b.cumulative_count, h.sample_count);
      }
    }
  }
}

}  // namespace
}  // namespace gmmscore::testing

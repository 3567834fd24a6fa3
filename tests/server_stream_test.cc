// Score streams through a real gmmscored on a loopback port (and on a Unix-domain socket),
// checked against offline scoring: one stream, many concurrent streams, partial windows (at the end
// and at the latency deadline), the FLOAT16 and BEAM_SPARSE encodings, state subsets, fusion across
// windows, and the decodable-style accessor.
#include <atomic>
#include <cmath>
#include <thread>

#include "formats/model_io.h"
#include "model/fusion.h"
#include "model/random_model.h"
#include "tests/server_test_util.h"

namespace gmmscore::testing {
namespace {

class ServerStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = StartServer(LoopbackConfig());
    ASSERT_NE(server_, nullptr);
    channel_ = Connect(server_->port());
  }
  std::unique_ptr<server::GmmscoreServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(ServerStreamTest, OneStreamEqualsOfflineScoresWithAPartialLastWindow) {
  const Matrix& feats = MonoFeatures().at("cards-001");
  ASSERT_NE(feats.rows % 10, 0) << "the test wants a partial last window";
  const Matrix offline = OfflineScores(MonoModelPath(), feats);
  std::vector<int32_t> windows;
  // Windows cut by their frame count alone, however slowly the frames come (under TSan, say).
  v1::StreamConfig config = StreamConfigFor("cards-001", 10);
  config.set_max_latency_ms(10000);
  auto streamed = StreamScores(channel_, config, feats, 7, &windows);
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  // Batching frames of other windows with these must not change a bit of the result.
  EXPECT_EQ(*streamed, offline);
  ASSERT_EQ(windows.size(), size_t(feats.rows + 9) / 10);
  for (size_t i = 0; i + 1 < windows.size(); ++i) EXPECT_EQ(windows[i], 10);
  EXPECT_EQ(windows.back(), feats.rows % 10);
}

// A daemon beside its clients (a pod's sidecar) listens on a Unix-domain socket: gRPC's
// "unix:PATH" address, served and reached like a TCP one.
TEST(ServerUnixSocketTest, StreamOverAUnixDomainSocketEqualsOfflineScores) {
  TempDir dir;
  const std::string path = dir.file("gmmscored.sock");
  server::ServerConfig config = LoopbackConfig();
  config.listen = "unix:" + path;
  auto server = StartServer(std::move(config));
  ASSERT_NE(server, nullptr);
  client::ChannelOptions o;
  o.server = "unix:" + path;
  o.plaintext = true;
  auto channel = client::MakeChannel(o);
  ASSERT_TRUE(channel.ok()) << channel.status();
  const Matrix& feats = MonoFeatures().at("lib-0880");
  v1::StreamConfig stream = StreamConfigFor("unix", 10);
  stream.set_max_latency_ms(10000);
  auto streamed = StreamScores(*channel, stream, feats, 10);
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  EXPECT_EQ(*streamed, OfflineScores(MonoModelPath(), feats));
}

TEST_F(ServerStreamTest, ManyConcurrentStreamsEachEqualOfflineScores) {
  constexpr int kStreams = 24;
  std::vector<std::pair<std::string, Matrix>> utterances(MonoFeatures().begin(),
                                                         MonoFeatures().end());
  std::vector<Matrix> offline;
  for (const auto& [key, feats] : utterances)
    offline.push_back(OfflineScores(MonoModelPath(), feats));
  std::atomic<int> matches{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kStreams; ++i) {
    threads.emplace_back([&, i] {
      const size_t u = size_t(i) % utterances.size();
      const int32_t window = 1 + 3 * (i % 7);  // 1..19 frames, different per stream
      auto scores = StreamScores(
          channel_, StreamConfigFor(utterances[u].first + "#" + std::to_string(i), window),
          utterances[u].second, 5 + i % 11);
      EXPECT_TRUE(scores.ok()) << scores.status();
      if (scores.ok() && *scores == offline[u]) ++matches;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(matches.load(), kStreams);
  // Every slot comes back (OnDone runs just after the client has its status).
  EXPECT_TRUE(WaitFor([&] { return server_->open_streams() == 0; }));
}

TEST_F(ServerStreamTest, PartialWindowIsSentAtTheLatencyDeadline) {
  v1::StreamConfig config = StreamConfigFor("deadline", 50);
  config.set_max_latency_ms(30);
  std::atomic<int> frames{0};
  client::ScoreStream::Options options;
  options.on_window = [&](const client::ScoreWindow& w) { frames += w.scores.rows; };
  auto stream = client::ScoreStream::Open(channel_, config, options);
  ASSERT_TRUE(stream.ok());
  const Matrix& feats = MonoFeatures().at("cards-003");
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE((*stream)->Push(Rows(feats, 0, 3)).ok());
  // Three frames of a 50-frame window arrive without End: the deadline sends them.
  ASSERT_TRUE(WaitFor([&] { return frames.load() == 3; }));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(25));
  EXPECT_EQ((*stream)->NumFramesReady(), 3);
  ASSERT_TRUE((*stream)->End().ok());
  EXPECT_TRUE((*stream)->Finish().ok());
}

TEST_F(ServerStreamTest, DecodableAccessorBlocksUntilFramesArrive) {
  const Matrix& feats = MonoFeatures().at("lib-0880");
  const Matrix offline = OfflineScores(MonoModelPath(), feats);
  auto stream = client::ScoreStream::Open(channel_, StreamConfigFor("decodable", 10), {});
  ASSERT_TRUE(stream.ok());
  std::thread producer([&] {
    for (int32_t t = 0; t < feats.rows; t += 13) {
      EXPECT_TRUE((*stream)->Push(Rows(feats, t, std::min(13, feats.rows - t))).ok());
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_TRUE((*stream)->End().ok());
  });
  // A decoder's loop: frame by frame, blocking on frames not yet scored.
  int32_t t = 0;
  for (;; ++t) {
    for (int32_t s = 0; s < offline.cols; s += 11) {
      ASSERT_EQ((*stream)->LogLikelihood(t, s), offline.at(t, s)) << "frame " << t;
    }
    if ((*stream)->IsLastFrame(t)) break;
  }
  producer.join();
  EXPECT_EQ(t, feats.rows - 1);
  EXPECT_TRUE((*stream)->Finish().ok());
  EXPECT_EQ((*stream)->NumFramesReady(), feats.rows);
  // A decoder past a frame frees its scores; later frames stay.
  (*stream)->DiscardFramesBefore(100);
  EXPECT_TRUE(std::isinf((*stream)->LogLikelihood(99, 0)));
  EXPECT_EQ((*stream)->LogLikelihood(100, 0), offline.at(100, 0));
}

TEST_F(ServerStreamTest, Float16StaysWithinHalfPrecision) {
  const Matrix& feats = MonoFeatures().at("raw-goforward");
  const Matrix offline = OfflineScores(MonoModelPath(), feats);
  v1::StreamConfig config = StreamConfigFor("half", 16);
  config.set_encoding(v1::StreamConfig::FLOAT16);
  auto scores = StreamScores(channel_, config, feats, 40);
  ASSERT_TRUE(scores.ok()) << scores.status();
  ASSERT_EQ(scores->rows, offline.rows);
  for (size_t i = 0; i < offline.data.size(); ++i) {
    // binary16 keeps 11 significant bits: relative error at most 2^-11.
    ASSERT_LE(std::abs(scores->data[i] - offline.data[i]), std::abs(offline.data[i]) / 2048.0f)
        << i;
  }
}

TEST_F(ServerStreamTest, Relative16IsWithinHalfAStepOfEveryScore) {
  const Matrix& feats = MonoFeatures().at("lib-0880");
  const Matrix offline = OfflineScores(MonoModelPath(), feats);
  v1::StreamConfig config = StreamConfigFor("relative", 10);
  config.set_encoding(v1::StreamConfig::RELATIVE16);
  auto scores = StreamScores(channel_, config, feats, 30);
  ASSERT_TRUE(scores.ok()) << scores.status();
  ASSERT_EQ(scores->rows, offline.rows);
  int64_t compared = 0;
  for (int32_t t = 0; t < offline.rows; ++t) {
    const float* row = offline.row(t);
    const float best = *std::max_element(row, row + offline.cols);
    for (int32_t s = 0; s < offline.cols; ++s) {
      if (best - row[s] >= 255.99f) {  // saturated: reported as at least that far below
        EXPECT_LE(scores->at(t, s), best - 255.99f);
        continue;
      }
      ASSERT_LE(std::abs(scores->at(t, s) - row[s]), 1.0f / 512 + 1e-4f) << t << " " << s;
      ++compared;
    }
  }
  EXPECT_GT(compared, offline.rows * offline.cols / 2);
}

TEST_F(ServerStreamTest, BeamSparseKeepsTheBestStatesWithinTheBeam) {
  const Matrix& feats = MonoFeatures().at("sp0.9-cards-002");
  const Matrix offline = OfflineScores(MonoModelPath(), feats);
  v1::StreamConfig config = StreamConfigFor("sparse", 10);
  config.set_encoding(v1::StreamConfig::BEAM_SPARSE);
  config.set_beam(12.0f);
  config.set_max_states(5);
  auto scores = StreamScores(channel_, config, feats, 25);
  ASSERT_TRUE(scores.ok()) << scores.status();
  ASSERT_EQ(scores->rows, offline.rows);
  for (int32_t t = 0; t < offline.rows; ++t) {
    const float* row = offline.row(t);
    const float best = *std::max_element(row, row + offline.cols);
    std::vector<float> sorted(row, row + offline.cols);
    std::sort(sorted.rbegin(), sorted.rend());
    int kept = 0;
    for (int32_t s = 0; s < offline.cols; ++s) {
      const float got = scores->at(t, s);
      if (std::isinf(got)) {
        // Left out: outside the beam, or not among the 5 best.
        EXPECT_TRUE(row[s] < best - 12.0f || row[s] <= sorted[4]) << t << " " << s;
      } else {
        ++kept;
        EXPECT_EQ(got, row[s]);
        EXPECT_GE(row[s], best - 12.0f);
      }
    }
    EXPECT_GE(kept, 1);
    EXPECT_LE(kept, 5);
  }
}

TEST_F(ServerStreamTest, StateSubsetReturnsThoseColumnsAndTheirBest) {
  const Matrix& feats = MonoFeatures().at("cards-003");
  const Matrix offline = OfflineScores(MonoModelPath(), feats);
  v1::StreamConfig config = StreamConfigFor("subset", 10);
  const std::vector<int32_t> subset = {40, 3, 17};
  for (int32_t s : subset) config.add_state_subset(s);
  std::vector<client::ScoreWindow> windows;
  client::ScoreStream::Options options;
  options.on_window = [&](const client::ScoreWindow& w) {
    EXPECT_EQ(w.response->num_states(), 3);
    windows.push_back(w);
  };
  auto stream = client::ScoreStream::Open(channel_, config, options);
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE((*stream)->Push(feats).ok());
  ASSERT_TRUE((*stream)->End().ok());
  ASSERT_TRUE((*stream)->Finish().ok());
  int32_t t = 0;
  for (const client::ScoreWindow& w : windows) {
    for (int32_t i = 0; i < w.scores.rows; ++i, ++t) {
      int32_t best = subset[0];
      for (int32_t s : subset) {
        EXPECT_EQ(w.scores.at(i, s), offline.at(t, s));
        if (offline.at(t, s) > offline.at(t, best)) best = s;
      }
      EXPECT_EQ(w.best_state[size_t(i)], best);
      EXPECT_EQ(w.best_score[size_t(i)], offline.at(t, best));
      EXPECT_TRUE(std::isinf(w.scores.at(i, 0)));  // not in the subset
    }
  }
  EXPECT_EQ(t, feats.rows);
}

TEST_F(ServerStreamTest, SelectFusionAcrossWindowsEqualsWholeUtteranceFusion) {
  // A second model with the same states and dimension, loaded under another name.
  TempDir dir;
  RandomModelOptions o;
  o.num_states = 56;
  o.dim = 39;
  o.max_gauss = 8;
  const std::string other = dir.file("other.gmms");
  ASSERT_TRUE(SaveModel(RandomModel(o, 7), other, ModelFormat::kNative).ok());
  ASSERT_TRUE(server_->registry().Load("other", other, false).ok());

  const Matrix& feats = MonoFeatures().at("cards-001");
  const Matrix a = OfflineScores(MonoModelPath(), feats);
  const Matrix b = OfflineScores(other, feats);
  for (v1::StreamConfig::Fusion rule : {v1::StreamConfig::SELECT, v1::StreamConfig::LOG_ADD}) {
    FusionSpec spec;
    spec.rule = rule == v1::StreamConfig::SELECT ? FusionRule::kSelectBest : FusionRule::kLogAdd;
    spec.select_window = 7;
    ASSERT_TRUE(ValidateFusion(&spec, 2).ok());
    Matrix expected;
    ASSERT_TRUE(FuseScores(spec, {&a, &b}, &expected).ok());

    v1::StreamConfig config = StreamConfigFor("fused", 10);
    config.add_models("other");
    config.set_fusion(rule);
    config.set_select_window(7);
    auto scores = StreamScores(channel_, config, feats, 9);
    ASSERT_TRUE(scores.ok()) << scores.status();
    EXPECT_EQ(*scores, expected) << v1::StreamConfig::Fusion_Name(rule);
  }
}

}  // namespace
}  // namespace gmmscore::testing

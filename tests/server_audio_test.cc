// Audio streams through a real gmmscored: 16-bit samples in chunks of any size, features made by
// the server's front end (online CMVN, deltas, dither seeded by the stream id), scores equal bit
// for bit to offline compute-feats + score; and the errors an audio stream can end with.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "feat/compute_features.h"
#include "tests/server_test_util.h"
#include "tests/test_util.h"
#include "tests/wave_test_util.h"

namespace gmmscore::testing {
namespace {

constexpr char kOnlineConfig[] =
    "--use-energy=false\n--dither=1\n--dither-seed=5\n--cmvn=online\n--cmn-window=150\n"
    "--delta-order=2\n--snip-edges=false\n";

class ServerAudioTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(dir_.file("online.conf"), kOnlineConfig);
    WriteFile(dir_.file("plain13.conf"), "--dither=0\n");  // 13 dims: no 39-dim model takes it
    server::ServerConfig config = LoopbackConfig();
    config.front_ends.push_back({"online", dir_.file("online.conf")});
    config.model_root = dir_.path();  // plain13.conf found there on first use
    server_ = StartServer(config);
    ASSERT_NE(server_, nullptr);
    channel_ = Connect(server_->port());
  }
  v1::StreamConfig AudioConfigFor(const std::string& id, const std::string& front_end,
                                  int32_t rate = 16000) {
    v1::StreamConfig c = StreamConfigFor(id, 10);
    c.set_dim(0);
    c.mutable_audio()->set_front_end(front_end);
    c.mutable_audio()->set_sample_rate_hz(rate);
    return c;
  }
  TempDir dir_;
  std::unique_ptr<server::GmmscoreServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

std::vector<int16_t> ToPcm(const std::vector<float>& wave) {
  return std::vector<int16_t>(wave.begin(), wave.end());
}

// Streams samples in uneven chunks; returns the scores of every window, in order.
absl::StatusOr<Matrix> StreamAudio(const std::shared_ptr<grpc::Channel>& channel,
                                   const v1::StreamConfig& config, const std::vector<int16_t>& pcm,
                                   uint32_t seed) {
  Matrix scores;
  client::ScoreStream::Options options;
  options.keep_scores = false;
  options.on_window = [&](const client::ScoreWindow& w) {
    scores.cols = w.scores.cols;
    scores.rows += w.scores.rows;
    scores.data.insert(scores.data.end(), w.scores.data.begin(), w.scores.data.end());
  };
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> size(1, 4);
  options.chunk_frames = size(rng);  // 10 to 40 ms a message
  auto stream = client::ScoreStream::Open(channel, config, options);
  if (!stream.ok()) return stream.status();
  absl::Status s;
  for (size_t at = 0; s.ok() && at < pcm.size();) {
    const size_t n =
        std::min<size_t>(pcm.size() - at, std::uniform_int_distribution<size_t>(1, 2000)(rng));
    s = (*stream)->PushAudio(pcm.data() + at, int64_t(n));
    at += n;
  }
  if (s.ok()) s = (*stream)->End();
  if (s.ok()) s = (*stream)->Finish();
  if (!s.ok()) return s;
  return scores;
}

TEST_F(ServerAudioTest, AudioStreamsEqualOfflineFeaturesAndScores) {
  FrontEndOptions opts;
  ASSERT_TRUE(ApplyFrontEndConfig("online.conf", kOnlineConfig, &opts).ok());
  for (const int64_t samples : {int64_t{41234}, int64_t{16000 * 4 + 77}, int64_t{350}}) {
    SCOPED_TRACE(samples);
    const std::vector<float> wave = RandomWave(samples, uint64_t(samples));
    const std::string id = "utt-" + std::to_string(samples);
    auto base = ComputeBaseFeatures(opts, wave, 16000, 1.0, id);
    ASSERT_TRUE(base.ok());
    auto feats = FinishFeatures(opts, *base, CmvnStats(13));
    ASSERT_TRUE(feats.ok()) << feats.status();
    const Matrix offline = OfflineScores(MonoModelPath(), *feats);
    auto streamed = StreamAudio(channel_, AudioConfigFor(id, "online"), ToPcm(wave), 7);
    ASSERT_TRUE(streamed.ok()) << streamed.status();
    EXPECT_EQ(*streamed, offline);
  }
}

// A tri3b model (LDA+MLLT, 40 dims) served from audio: the front end splices 7 frames of online
// CMVN'd MFCCs and applies the model's final.mat; the streamed scores equal offline features +
// score bit for bit.
TEST(ServerAudioLdaTest, SplicedTransformedStreamsEqualOfflineScores) {
  TempDir dir;
  const std::string conf =
      "--use-energy=false\n--dither=0\n--cmvn=online\n--cmn-window=200\n"
      "--splice-left-context=3\n--splice-right-context=3\n--transform=" +
      DataPath("kaldi-tri-feats/final.mat") + "\n";
  WriteFile(dir.file("lda.conf"), conf);
  server::ServerConfig config = LoopbackConfig();
  const std::string tri3b = DataPath("kaldi-tri-fmllr/final.mdl");
  config.models.push_back({"tri3b", tri3b});
  config.front_ends.push_back({"lda", dir.file("lda.conf")});
  auto server = StartServer(config);
  ASSERT_NE(server, nullptr);
  auto channel = Connect(server->port());
  FrontEndOptions opts;
  ASSERT_TRUE(ApplyFrontEndConfig("lda.conf", conf, &opts).ok());
  for (const int64_t samples : {int64_t{30011}, int64_t{800}}) {
    SCOPED_TRACE(samples);
    const std::vector<float> wave = RandomWave(samples, uint64_t(samples) + 3);
    const std::string id = "lda-" + std::to_string(samples);
    auto base = ComputeBaseFeatures(opts, wave, 16000, 1.0, id);
    ASSERT_TRUE(base.ok());
    auto feats = FinishFeatures(opts, *base, CmvnStats(13));
    ASSERT_TRUE(feats.ok()) << feats.status();
    ASSERT_EQ(feats->cols, 40);
    v1::StreamConfig c = StreamConfigFor(id, 10, "tri3b", 0);
    c.mutable_audio()->set_front_end("lda");
    c.mutable_audio()->set_sample_rate_hz(16000);
    auto streamed = StreamAudio(channel, c, ToPcm(wave), 11);
    ASSERT_TRUE(streamed.ok()) << streamed.status();
    EXPECT_EQ(*streamed, OfflineScores(tri3b, *feats));
  }
}

TEST_F(ServerAudioTest, BadAudioStreamsEndWithAnErrorNamingWhatWasWrong) {
  const std::vector<int16_t> pcm = ToPcm(RandomWave(4000, 1));
  auto expect_error = [&](const v1::StreamConfig& config, absl::StatusCode code,
                          const std::string& words) {
    auto r = StreamAudio(channel_, config, pcm, 1);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), code) << r.status();
    EXPECT_NE(r.status().message().find(words), std::string::npos) << r.status();
  };
  expect_error(AudioConfigFor("a", "nonesuch"), absl::StatusCode::kNotFound, "nonesuch");
  expect_error(AudioConfigFor("b", "online", 8000), absl::StatusCode::kInvalidArgument, "8000");
  expect_error(AudioConfigFor("c", "plain13"), absl::StatusCode::kInvalidArgument,
               "13-dimensional");
  expect_error(AudioConfigFor("d", "../online"), absl::StatusCode::kInvalidArgument, "front end");
  // Audio on a feature stream.
  v1::StreamConfig features = StreamConfigFor("e", 10);
  auto r = StreamAudio(channel_, features, pcm, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("feature stream"), std::string::npos) << r.status();
  // Other streams are served meanwhile.
  auto fine = StreamAudio(channel_, AudioConfigFor("f", "online"), pcm, 2);
  EXPECT_TRUE(fine.ok()) << fine.status();
}

}  // namespace
}  // namespace gmmscore::testing

// gmmscored with --backend cuda, in-process on a loopback port: concurrent streams scored on the
// GPU lanes (windows of many streams batched, two batches in flight per lane, windows put back in
// order, max and log-add fused on the device, select by each stream; 16-bit rows encoded on the
// device, on Score calls and on a ScoreStreams call) against offline CPU scoring within the
// float32 tolerance of both. Skips, with the reason, where no CUDA device is present.
#include <cuda_runtime_api.h>

#include <atomic>
#include <cmath>
#include <thread>

#include "absl/strings/str_cat.h"
#include "formats/model_io.h"
#include "gmmscore/v1/scorer.grpc.pb.h"
#include "model/fusion.h"
#include "model/random_model.h"
#include "proto/wire_codec.h"
#include "server/scheduling/lane_set.h"
#include "tests/server_test_util.h"

namespace gmmscore::testing {
namespace {

constexpr int32_t kDim = 39;
constexpr double kTolerance = 2e-3;  // each side within 1e-3 of float64

class ServerCudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      GTEST_SKIP() << "no CUDA device";
    }
    // Means at -2 and +2: frames drawn around either favour one model, so select switches.
    for (int k = 0; k < 2; ++k) {
      RandomModelOptions o;
      o.dim = kDim;
      o.num_states = 200;
      o.max_gauss = 30;
      o.mean_offset = k == 0 ? -2.0f : 2.0f;
      models_.push_back(RandomModel(o, 90u + k));
      paths_.push_back(dir_.file(k == 0 ? "a.gmms" : "b.gmms"));
      ASSERT_TRUE(SaveModel(models_.back(), paths_.back(), ModelFormat::kNative).ok());
    }
    server::ServerConfig config = LoopbackConfig();
    config.backend = "cuda";
    config.models = {{"a", paths_[0]}, {"b", paths_[1]}};
    config.batcher.max_batch_frames = 64;  // several batches in flight at once
    config.batcher.max_queue_delay = absl::Milliseconds(1);
    server_ = StartServer(config);
    ASSERT_NE(server_, nullptr);
    channel_ = Connect(server_->port());
  }

  // The offline scores a stream of config gets: model a's, or (two_models) the max fusion of a
  // and b, which config is then set to ask for.
  void ExpectMaxOfModels(const Matrix& feats, bool two_models, v1::StreamConfig* config,
                         Matrix* expected) {
    *expected = OfflineScores(paths_[0], feats);
    if (!two_models) return;
    config->add_models("b");
    config->set_fusion(v1::StreamConfig::MAX);
    const Matrix a = *expected, b = OfflineScores(paths_[1], feats);
    FusionSpec spec;
    spec.rule = FusionRule::kMax;
    ASSERT_TRUE(ValidateFusion(&spec, 2).ok());
    ASSERT_TRUE(FuseScores(spec, {&a, &b}, expected).ok());
  }

  TempDir dir_;
  std::vector<GmmModel> models_;
  std::vector<std::string> paths_;
  std::unique_ptr<server::GmmscoreServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST(ServerCudaLanesTest, GpuLanesBatchUpTo1024FramesUnlessTold) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) GTEST_SKIP() << "no CUDA device";
  server::ServerConfig config;
  config.backend = "cuda";
  server::Metrics metrics;
  auto lanes = server::LaneSet::Create(config, &metrics);
  ASSERT_TRUE(lanes.ok()) << lanes.status();
  EXPECT_EQ((*lanes)->batcher_options().max_batch_frames, 1024);
  config.batcher.max_batch_frames = 512;
  lanes = server::LaneSet::Create(config, &metrics);
  ASSERT_TRUE(lanes.ok()) << lanes.status();
  EXPECT_EQ((*lanes)->batcher_options().max_batch_frames, 512);
}

double MaxAbsDifference(const Matrix& a, const Matrix& b) {
  if (a.rows != b.rows || a.cols != b.cols) return INFINITY;
  double worst = 0.0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    const double d = std::abs(double(a.data[i]) - double(b.data[i]));
    worst = std::isnan(d) ? INFINITY : std::max(worst, d);
  }
  return worst;
}

TEST_F(ServerCudaTest, ConcurrentStreamsOfEachFusionMatchOfflineScores) {
  struct Setup {
    std::vector<std::string> models;
    v1::StreamConfig::Fusion rule;
    FusionRule host_rule;
  };
  const std::vector<Setup> setups = {
      {{"a"}, v1::StreamConfig::MAX, FusionRule::kMax},
      {{"a", "b"}, v1::StreamConfig::MAX, FusionRule::kMax},
      {{"a", "b"}, v1::StreamConfig::LOG_ADD, FusionRule::kLogAdd},
      {{"a", "b"}, v1::StreamConfig::SELECT, FusionRule::kSelectBest}};
  constexpr int kStreamsPerSetup = 6;
  std::atomic<int> matches{0};
  std::vector<std::thread> threads;
  for (size_t s = 0; s < setups.size(); ++s) {
    for (int i = 0; i < kStreamsPerSetup; ++i) {
      threads.emplace_back([&, s, i] {
        const Setup& setup = setups[s];
        // 97 frames: the first half around -2, the rest around +2; windows of 10 end in 7.
        const uint32_t seed = uint32_t(100 * s + i);
        Matrix feats = RandomFeatures(97, kDim, -2.0f, 2.5f, seed);
        const Matrix second = RandomFeatures(47, kDim, 2.0f, 2.5f, seed + 50);
        std::copy(second.data.begin(), second.data.end(), feats.row(50));
        v1::StreamConfig config =
            StreamConfigFor(absl::StrCat("s", s, "-", i), 10, setup.models[0], kDim);
        FusionSpec spec;
        spec.rule = setup.host_rule;
        spec.select_window = 7;
        if (setup.models.size() > 1) {
          config.add_models(setup.models[1]);
          config.set_fusion(setup.rule);
          config.set_select_window(7);
        }
        EXPECT_TRUE(ValidateFusion(&spec, setup.models.size()).ok());
        std::vector<Matrix> offline;
        for (size_t k = 0; k < setup.models.size(); ++k) {
          offline.push_back(OfflineScores(paths_[k], feats));
        }
        Matrix expected = offline[0];
        if (offline.size() > 1) {
          EXPECT_TRUE(FuseScores(spec, {&offline[0], &offline[1]}, &expected).ok());
        }
        auto streamed = StreamScores(channel_, config, feats, 13);
        EXPECT_TRUE(streamed.ok()) << streamed.status();
        if (!streamed.ok()) return;
        const double error = MaxAbsDifference(*streamed, expected);
        EXPECT_LE(error, kTolerance) << "setup " << s << " stream " << i;
        if (error <= kTolerance) ++matches;
      });
    }
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(matches.load(), int(setups.size()) * kStreamsPerSetup);
  // The GPU lane scored them, and each model is resident there.
  double gpu_frames = 0;
  for (const prometheus::MetricFamily& f : server_->metrics().registry().Collect()) {
    if (f.name != "gmmscore_device_frames_scored_total") continue;
    for (const prometheus::ClientMetric& m : f.metric) {
      if (m.label.at(0).value.rfind("cuda:", 0) == 0) gpu_frames += m.counter.value;
    }
  }
  EXPECT_GE(gpu_frames, 97.0 * kStreamsPerSetup * double(setups.size()));
  const absl::StatusOr<v1::ModelInfo> info = server_->registry().Get("a");
  ASSERT_TRUE(info.ok());
  ASSERT_GE(info->bytes_per_device_size(), 1);
  EXPECT_EQ(info->bytes_per_device(0).device(), "cuda:0");
}

// FLOAT16 and RELATIVE16 streams are encoded on the GPU where their scores are made (one model,
// and two fused): decoded, they are the offline scores within each encoding's promise.
// How far a 16-bit stream's decoded scores are beyond the encoding's promise (half a binary16
// step at the value's magnitude, or RELATIVE16's 1/512 nat) from the offline scores; RELATIVE16's
// saturated states (over 250 nats below the best) are checked to be that far.
double WorstBeyondPromise(v1::StreamConfig::Encoding encoding, const Matrix& expected,
                          const Matrix& streamed) {
  EXPECT_EQ(streamed.rows, expected.rows);
  EXPECT_EQ(streamed.cols, expected.cols);
  if (streamed.rows != expected.rows || streamed.cols != expected.cols) return INFINITY;
  double worst = 0.0;
  for (int32_t t = 0; t < expected.rows; ++t) {
    const float* want = expected.row(t);
    const float best = *std::max_element(want, want + expected.cols);
    for (int32_t j = 0; j < expected.cols; ++j) {
      const double got = streamed.at(t, j);
      if (encoding == v1::StreamConfig::RELATIVE16 && best - want[j] > 250.0f) {
        EXPECT_LE(got, best - 250.0 + kTolerance) << "saturated, frame " << t;
        continue;
      }
      const double promise = encoding == v1::StreamConfig::FLOAT16
                                 ? std::ldexp(1.0, std::ilogb(want[j]) - 11)
                                 : 1.0 / 512;
      worst = std::max(worst, std::abs(got - double(want[j])) - promise);
    }
  }
  return worst;
}

TEST_F(ServerCudaTest, SixteenBitStreamsEncodedOnTheDeviceDecodeToTheOfflineScores) {
  int checked = 0;
  for (const bool two_models : {false, true}) {
    for (const auto encoding : {v1::StreamConfig::FLOAT16, v1::StreamConfig::RELATIVE16}) {
      const Matrix feats = RandomFeatures(53, kDim, 0.0f, 3.0f, 7u + uint32_t(checked));
      v1::StreamConfig config = StreamConfigFor(absl::StrCat("e", checked), 10, "a", kDim);
      config.set_encoding(encoding);
      Matrix expected;
      ASSERT_NO_FATAL_FAILURE(ExpectMaxOfModels(feats, two_models, &config, &expected));
      auto streamed = StreamScores(channel_, config, feats, 7);
      ASSERT_TRUE(streamed.ok()) << streamed.status();
      EXPECT_LE(WorstBeyondPromise(encoding, expected, *streamed), kTolerance)
          << "two models " << two_models << ", encoding " << encoding;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4);
}

// The same rows, which the device encoded and the server sends without copying them, on one
// ScoreStreams call: eight streams (both 16-bit encodings, one model and two fused) whose chunks
// share messages, their windows the server's.
TEST_F(ServerCudaTest, ScoreStreamsCarryTheRowsTheDeviceEncoded) {
  auto stub = v1::Scorer::NewStub(channel_);
  grpc::ClientContext context;
  auto call = stub->ScoreStreams(&context);
  struct Stream {
    v1::StreamConfig::Encoding encoding;
    Matrix feats, expected, got;
    int32_t statuses = 0;
    grpc::StatusCode code = grpc::StatusCode::OK;
  };
  std::vector<Stream> streams(8);
  v1::ScoreStreamsRequest first;
  for (size_t i = 0; i < streams.size(); ++i) {
    Stream& s = streams[i];
    s.encoding = i % 2 == 0 ? v1::StreamConfig::RELATIVE16 : v1::StreamConfig::FLOAT16;
    s.feats = RandomFeatures(31 + int32_t(i) * 5, kDim, 0.0f, 3.0f, 40u + uint32_t(i));
    v1::StreamConfig config = StreamConfigFor(absl::StrCat("mux", i), 10, "a", kDim);
    config.set_encoding(s.encoding);
    config.set_max_latency_ms(10000);
    ASSERT_NO_FATAL_FAILURE(ExpectMaxOfModels(s.feats, i % 4 >= 2, &config, &s.expected));
    v1::StreamRequest* e = first.add_requests();
    e->set_tag(i);
    *e->mutable_request()->mutable_config() = config;
  }
  ASSERT_TRUE(call->Write(first));
  std::thread reader([&] {
    v1::ScoreStreamsResponse response;
    while (call->Read(&response)) {
      for (const v1::StreamReply& reply : response.replies()) {
        Stream& s = streams.at(reply.tag());
        if (reply.has_status()) {
          ++s.statuses;
          s.code = grpc::StatusCode(reply.status().code());
          continue;
        }
        client::ScoreWindow w;
        const absl::Status decoded = client::DecodeResponse(reply.response(), {}, &w);
        EXPECT_TRUE(decoded.ok()) << decoded;
        s.got.cols = w.scores.cols;
        s.got.rows += w.scores.rows;
        s.got.data.insert(s.got.data.end(), w.scores.data.begin(), w.scores.data.end());
      }
    }
  });
  // Chunks of 7 frames, every stream's next in each message, then End and the half-close.
  for (int32_t sent = 0;; sent += 7) {
    v1::ScoreStreamsRequest message;
    for (size_t i = 0; i < streams.size(); ++i) {
      const Matrix& feats = streams[i].feats;
      if (sent >= feats.rows) continue;
      const int32_t n = std::min(7, feats.rows - sent);
      v1::StreamRequest* e = message.add_requests();
      e->set_tag(i);
      e->mutable_request()->mutable_features()->set_first_frame(sent);
      wire::AppendFloat32({feats.row(sent), size_t(n) * kDim},
                          e->mutable_request()->mutable_features()->mutable_data());
      if (sent + n == feats.rows) {
        v1::StreamRequest* end = message.add_requests();
        end->set_tag(i);
        end->mutable_request()->mutable_end();
        end->set_writes_done(true);
      }
    }
    if (message.requests_size() == 0) break;
    ASSERT_TRUE(call->Write(message));
  }
  call->WritesDone();
  reader.join();
  const grpc::Status status = call->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  for (size_t i = 0; i < streams.size(); ++i) {
    const Stream& s = streams[i];
    EXPECT_EQ(s.statuses, 1) << "stream " << i;
    EXPECT_EQ(s.code, grpc::StatusCode::OK) << "stream " << i;
    EXPECT_LE(WorstBeyondPromise(s.encoding, s.expected, s.got), kTolerance) << "stream " << i;
  }
}

// BEAM_SPARSE streams have their states within the beam selected on the GPU (one model, and two
// fused; with and without a cap): decoded, every kept state is the offline score, the states kept
// are those within the beam of the frame's best, and with a cap the best of them. States within
// the tolerance of the beam's edge (or of the cap's) may go either way.
TEST_F(ServerCudaTest, BeamSparseStreamsSelectedOnTheDeviceKeepTheOfflineBeam) {
  int checked = 0;
  for (const bool two_models : {false, true}) {
    for (const int32_t max_states : {0, 7}) {
      const Matrix feats = RandomFeatures(41, kDim, 0.0f, 2.0f, 70u + uint32_t(checked));
      v1::StreamConfig config = StreamConfigFor(absl::StrCat("b", checked), 10, "a", kDim);
      config.set_encoding(v1::StreamConfig::BEAM_SPARSE);
      constexpr float kBeam = 12.0f;
      config.set_beam(kBeam);
      config.set_max_states(max_states);
      Matrix expected;
      ASSERT_NO_FATAL_FAILURE(ExpectMaxOfModels(feats, two_models, &config, &expected));
      auto streamed = StreamScores(channel_, config, feats, 9);
      ASSERT_TRUE(streamed.ok()) << streamed.status();
      ASSERT_EQ(streamed->rows, expected.rows);
      for (int32_t t = 0; t < expected.rows; ++t) {
        const float* want = expected.row(t);
        const float best = *std::max_element(want, want + expected.cols);
        int32_t kept = 0;
        float lowest_kept = INFINITY;
        for (int32_t j = 0; j < expected.cols; ++j) {
          const float got = streamed->at(t, j);
          if (std::isinf(got)) continue;
          ++kept;
          lowest_kept = std::min(lowest_kept, want[j]);
          EXPECT_LE(std::abs(double(got) - double(want[j])), kTolerance) << t << " " << j;
          EXPECT_GE(want[j], best - kBeam - kTolerance) << "outside the beam: " << t << " " << j;
        }
        EXPECT_GE(kept, 1);
        EXPECT_LE(kept, max_states > 0 ? max_states : expected.cols);
        for (int32_t j = 0; j < expected.cols; ++j) {
          if (!std::isinf(streamed->at(t, j))) continue;
          const bool capped = max_states > 0 && kept == max_states;
          EXPECT_LT(want[j], capped ? lowest_kept + kTolerance : best - kBeam + kTolerance)
              << "left out: frame " << t << " state " << j;
        }
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4);
}

}  // namespace
}  // namespace gmmscore::testing

// Protocol abuse against a real gmmscored in-process: a seeded random sequence of raw Score
// streams (configs with random and absurd fields, chunks of random sizes, offsets and values,
// ends, early cancels, short deadlines) and admin calls without the token, from several threads,
// while a witness stream is scored and health is asked. Every abusive call must end with a
// documented status; the witness must finish bit-identical to offline scoring; health must answer
// SERVING throughout; every stream's slot must come back; and the process's RSS must come back
// near where it was (within 100 MB: a sanitizer's quarantine holds some).
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "gmmscore/v1/model_admin.grpc.pb.h"
#include "proto/wire_codec.h"
#include "tests/server_test_util.h"

namespace gmmscore::testing {
namespace {

int64_t RssKb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return 0;
}

// One abusive Score call, its requests drawn from rng; returns the final status.
grpc::Status AbusiveStream(const std::shared_ptr<grpc::Channel>& channel, std::mt19937& rng,
                           const Matrix& feats) {
  std::uniform_int_distribution<int> pick(0, 99);
  auto stub = v1::Scorer::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(pick(rng) < 10 ? 5 : 10000));
  auto stream = stub->Score(&context);
  const int messages = 1 + pick(rng) % 8;
  int64_t next_frame = 0;
  for (int m = 0; m < messages; ++m) {
    v1::ScoreRequest r;
    const int kind = pick(rng);
    if (kind < 30 || m == 0) {
      v1::StreamConfig* c = r.mutable_config();
      c->set_stream_id(std::string(size_t(pick(rng) % 3 == 0 ? 300 : 5), 'a'));
      const int models = pick(rng) % 4;
      for (int k = 0; k < models; ++k) c->add_models(pick(rng) < 80 ? "mono" : "unknown-model");
      c->set_dim(pick(rng) < 85 ? 39 : pick(rng));
      c->set_window_frames(pick(rng) < 70 ? 10 : pick(rng) * 100000);
      c->set_fusion(static_cast<v1::StreamConfig::Fusion>(pick(rng) % 5));
      c->set_select_window(pick(rng) < 50 ? 7 : 2147483647);
      c->set_encoding(static_cast<v1::StreamConfig::Encoding>(pick(rng) % 4));
      c->set_beam(float(pick(rng) % 3));
      c->set_max_states(pick(rng) - 10);
      for (int s = pick(rng) % 3 == 0 ? 200 : 0; s > 0; --s) c->add_state_subset(pick(rng) - 20);
    } else if (kind < 85) {
      v1::FeatureChunk* f = r.mutable_features();
      const int frames = pick(rng) % 40;
      f->set_first_frame(pick(rng) < 85 ? next_frame : pick(rng) - 50);
      std::vector<float> values;
      for (int t = 0; t < frames; ++t) {
        const float* row = feats.row(int32_t((next_frame + t) % feats.rows));
        values.insert(values.end(), row, row + feats.cols);
      }
      if (!values.empty() && pick(rng) < 10) values[size_t(pick(rng)) % values.size()] = NAN;
      if (!values.empty() && pick(rng) < 10) values[size_t(pick(rng)) % values.size()] = 3e38f;
      wire::AppendFloat32(values, f->mutable_data());
      if (pick(rng) < 5) f->mutable_data()->resize(f->data().size() / 2 + 1);
      next_frame += frames;
    } else if (kind < 95) {
      r.mutable_end();
    }  // else: an empty request
    if (!stream->Write(r)) break;
    if (pick(rng) < 5) {
      context.TryCancel();
      break;
    }
  }
  if (pick(rng) < 80) stream->WritesDone();
  v1::ScoreResponse response;
  while (stream->Read(&response)) {
  }
  return stream->Finish();
}

TEST(ServerAbuseTest, ARandomRequestSequenceEndsInDocumentedStatusesAndHarmsNoOne) {
  server::ServerConfig config = LoopbackConfig();
  config.max_streams = 64;
  config.stream.idle_timeout = absl::Seconds(2);
  auto server = StartServer(config);
  ASSERT_NE(server, nullptr);
  auto channel = Connect(server->port());
  const Matrix& feats = MonoFeatures().at("cards-001");
  const Matrix offline = OfflineScores(MonoModelPath(), feats);
  // A first stream, so that the baseline holds what serving costs.
  ASSERT_TRUE(StreamScores(channel, StreamConfigFor("warm", 10), feats, 13).ok());
  const int64_t rss_before = RssKb();

  std::atomic<bool> abusing{true};
  std::atomic<int> health_failures{0}, health_checks{0};
  std::thread health([&] {
    while (abusing) {
      ++health_checks;
      if (!client::CheckHealth(channel, "").ok()) ++health_failures;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  client::ScoreStream::Options options;
  options.chunk_frames = 7;
  auto witness = client::ScoreStream::Open(channel, StreamConfigFor("witness", 10), options);
  ASSERT_TRUE(witness.ok()) << witness.status();

  const std::set<grpc::StatusCode> documented = {grpc::StatusCode::OK,
                                                 grpc::StatusCode::INVALID_ARGUMENT,
                                                 grpc::StatusCode::NOT_FOUND,
                                                 grpc::StatusCode::FAILED_PRECONDITION,
                                                 grpc::StatusCode::CANCELLED,
                                                 grpc::StatusCode::DEADLINE_EXCEEDED,
                                                 grpc::StatusCode::UNAVAILABLE,
                                                 grpc::StatusCode::RESOURCE_EXHAUSTED,
                                                 grpc::StatusCode::PERMISSION_DENIED,
                                                 grpc::StatusCode::UNAUTHENTICATED};
  std::atomic<int> calls{0};
  std::vector<std::thread> abusers;
  for (int a = 0; a < 6; ++a) {
    abusers.emplace_back([&, a] {
      std::mt19937 rng(1000 + a);
      auto admin = v1::ModelAdmin::NewStub(channel);
      for (int i = 0; i < 60; ++i) {
        grpc::Status status;
        if (std::uniform_int_distribution<int>(0, 9)(rng) == 0) {
          grpc::ClientContext context;  // a mutation without the token
          v1::LoadModelRequest request;
          request.set_name("evil");
          request.set_path("../../etc/passwd");
          v1::ModelInfo info;
          status = admin->LoadModel(&context, request, &info);
          EXPECT_NE(status.error_code(), grpc::StatusCode::OK);
        } else {
          status = AbusiveStream(channel, rng, feats);
        }
        EXPECT_TRUE(documented.count(status.error_code()))
            << status.error_code() << ": " << status.error_message();
        ++calls;
      }
    });
  }
  // The witness goes on while the abuse runs, and ends before the stream idles out.
  for (int32_t first = 0; first < feats.rows; first += 20) {
    EXPECT_TRUE((*witness)->Push(Rows(feats, first, std::min(20, feats.rows - first))).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  EXPECT_TRUE((*witness)->End().ok());
  const absl::Status witness_status = (*witness)->Finish();
  for (std::thread& t : abusers) t.join();
  abusing = false;
  health.join();
  ASSERT_TRUE(witness_status.ok()) << witness_status;

  EXPECT_EQ(calls.load(), 360);
  ASSERT_EQ((*witness)->NumFramesReady(), feats.rows);
  for (int32_t t = 0; t < feats.rows; ++t) {
    for (int32_t s = 0; s < offline.cols; ++s) {
      ASSERT_EQ((*witness)->LogLikelihood(t, s), offline.at(t, s)) << t << " " << s;
    }
  }
  EXPECT_GT(health_checks.load(), 0);
  EXPECT_EQ(health_failures.load(), 0);
  // Every slot comes back; the memory the abuse took is given back.
  EXPECT_TRUE(WaitFor([&] { return server->open_streams() == 0; })) << server->open_streams();
  const int64_t rss_after = RssKb();
  EXPECT_LT(rss_after - rss_before, 100 * 1024) << rss_before << " kB before, " << rss_after;
}

}  // namespace
}  // namespace gmmscore::testing

// The wire contract: the generated messages round-trip, the oneof and the encodings have the
// numbers clients rely on, and the services have the documented methods.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "gmmscore/v1/model_admin.grpc.pb.h"
#include "gmmscore/v1/scorer.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace gmmscore {
namespace {

TEST(ServerProtoTest, ScoreRequestRoundTrip) {
  v1::ScoreRequest config;
  v1::StreamConfig* c = config.mutable_config();
  c->set_stream_id("utt-1");
  c->add_models("mono");
  c->set_dim(39);
  c->set_window_frames(10);
  c->set_encoding(v1::StreamConfig::BEAM_SPARSE);
  c->set_beam(8.0f);
  std::string bytes;
  ASSERT_TRUE(config.SerializeToString(&bytes));
  v1::ScoreRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  EXPECT_EQ(parsed.request_case(), v1::ScoreRequest::kConfig);
  EXPECT_EQ(parsed.config().stream_id(), "utt-1");
  EXPECT_EQ(parsed.config().encoding(), v1::StreamConfig::BEAM_SPARSE);

  // Features travel as packed float32 bytes, not as repeated float.
  v1::ScoreRequest features;
  const float frames[2] = {1.5f, -2.25f};
  features.mutable_features()->set_first_frame(7);
  features.mutable_features()->set_data(reinterpret_cast<const char*>(frames), sizeof(frames));
  ASSERT_TRUE(parsed.ParseFromString(features.SerializeAsString()));
  ASSERT_EQ(parsed.request_case(), v1::ScoreRequest::kFeatures);
  float back[2];
  ASSERT_EQ(parsed.features().data().size(), sizeof(back));
  std::memcpy(back, parsed.features().data().data(), sizeof(back));
  EXPECT_EQ(back[0], 1.5f);
  EXPECT_EQ(back[1], -2.25f);
  EXPECT_EQ(parsed.features().first_frame(), 7);

  v1::ScoreRequest end;
  end.mutable_end();
  ASSERT_TRUE(parsed.ParseFromString(end.SerializeAsString()));
  EXPECT_EQ(parsed.request_case(), v1::ScoreRequest::kEnd);
}

TEST(ServerProtoTest, EncodingsAndFusionKeepTheirNumbers) {
  EXPECT_EQ(v1::StreamConfig::FLOAT32, 0);  // the default encoding
  EXPECT_EQ(v1::StreamConfig::FLOAT16, 1);
  EXPECT_EQ(v1::StreamConfig::BEAM_SPARSE, 2);
  EXPECT_EQ(v1::StreamConfig::MAX, 0);
  EXPECT_EQ(v1::StreamConfig::SELECT, 3);
  EXPECT_EQ(v1::ModelInfo::UNLOADING, 3);
}

TEST(ServerProtoTest, ServicesHaveTheDocumentedMethods) {
  // Naming a message of each file links its generated code, which registers the file.
  ASSERT_NE(v1::ModelInfo::descriptor(), nullptr);
  ASSERT_NE(grpc::health::v1::HealthCheckRequest::descriptor(), nullptr);
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  const auto* scorer = pool->FindServiceByName("gmmscore.v1.Scorer");
  ASSERT_NE(scorer, nullptr);
  const auto* score = scorer->FindMethodByName("Score");
  ASSERT_NE(score, nullptr);
  EXPECT_TRUE(score->client_streaming());
  EXPECT_TRUE(score->server_streaming());
  ASSERT_NE(scorer->FindMethodByName("Align"), nullptr);

  const auto* admin = pool->FindServiceByName("gmmscore.v1.ModelAdmin");
  ASSERT_NE(admin, nullptr);
  for (const char* method : {"ListModels", "GetModel", "LoadModel", "UnloadModel"}) {
    EXPECT_NE(admin->FindMethodByName(method), nullptr) << method;
  }
  EXPECT_NE(pool->FindServiceByName("grpc.health.v1.Health"), nullptr);
}

}  // namespace
}  // namespace gmmscore

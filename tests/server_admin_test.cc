// Model administration through the daemon: the admin token, --model-root confinement, loading,
// replacing and unloading models while streams use them; health per model; the Prometheus
// endpoint; TLS and mTLS.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "formats/kaldi_model.h"
#include "tests/server_test_util.h"
#include "train/accumulate.h"
#include "train/map_update.h"

namespace gmmscore::testing {
namespace {

constexpr char kToken[] = "s3cret-token";

class ServerAdminTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.file("models");
    std::filesystem::create_directories(root_ + "/kaldi");
    std::filesystem::copy_file(MonoModelPath(), root_ + "/kaldi/final.mdl");
    WriteFile(dir_.file("token"), std::string(kToken) + "\n");
    server::ServerConfig config = LoopbackConfig();
    config.model_root = root_;
    config.admin_token_file = dir_.file("token");
    // Stopping the metrics endpoint takes civetweb up to 2 s: only the test that scrapes it
    // has one.
    if (std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) ==
        "PrometheusEndpoint") {
      config.metrics_listen = "127.0.0.1:0";
    }
    server_ = StartServer(config);
    ASSERT_NE(server_, nullptr);
    channel_ = Connect(server_->port());
  }

  TempDir dir_;
  std::string root_;
  std::unique_ptr<server::GmmscoreServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  const Matrix& feats_ = MonoFeatures().at("cards-001");
};

TEST_F(ServerAdminTest, ListAndGetNeedNoToken) {
  client::AdminClient anyone(channel_);
  auto models = anyone.List();
  ASSERT_TRUE(models.ok()) << models.status();
  ASSERT_EQ(models->size(), 1u);
  const v1::ModelInfo& m = (*models)[0];
  EXPECT_EQ(m.name(), "mono");
  EXPECT_EQ(m.version(), 1);
  EXPECT_EQ(m.status(), v1::ModelInfo::READY);
  EXPECT_EQ(m.num_states(), 56);
  EXPECT_EQ(m.num_gaussians(), 677);
  EXPECT_EQ(m.dim(), 39);
  EXPECT_EQ(m.format(), "kaldi");
  ASSERT_EQ(m.bytes_per_device_size(), 1);
  EXPECT_EQ(m.bytes_per_device(0).device(), "cpu");
  EXPECT_EQ(m.bytes_per_device(0).bytes(), 677 * (2 * 39 + 1) * 4);
  EXPECT_EQ(anyone.Get("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ServerAdminTest, MutationsNeedTheToken) {
  client::AdminClient anonymous(channel_);
  EXPECT_EQ(anonymous.Load("x", "kaldi/final.mdl").status().code(),
            absl::StatusCode::kUnauthenticated);
  client::AdminClient wrong(channel_, "guess");
  EXPECT_EQ(wrong.Unload("mono").status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(client::AdminClient(channel_).Get("mono").ok());  // still there
}

TEST(ServerAdminNoTokenTest, MutationsAreDisabledWithoutATokenFile) {
  auto server = StartServer(LoopbackConfig());
  ASSERT_NE(server, nullptr);
  client::AdminClient admin(Connect(server->port()), "anything");
  const absl::Status s = admin.Unload("mono").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("--admin-token-file"), std::string::npos) << s;
}

TEST_F(ServerAdminTest, LoadsAreConfinedToTheModelRoot) {
  client::AdminClient admin(channel_, kToken);
  std::filesystem::create_symlink(MonoModelPath(), root_ + "/escape.mdl");
  for (const char* path : {"../token", "/etc/passwd", "kaldi/../../token", "escape.mdl", ""}) {
    EXPECT_EQ(admin.Load("x", path).status().code(), absl::StatusCode::kPermissionDenied) << path;
  }
  EXPECT_FALSE(admin.Load("x", "kaldi/missing.mdl").ok());
  EXPECT_EQ(admin.Load("bad name!", "kaldi/final.mdl").status().code(),
            absl::StatusCode::kInvalidArgument);
  auto loaded = admin.Load("mono2", "kaldi/final.mdl");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->status(), v1::ModelInfo::READY);
  EXPECT_EQ(loaded->version(), 1);
  EXPECT_TRUE(client::CheckHealth(channel_, "gmmscore.v1.Scorer/mono2").ok());
  auto scores = StreamScores(channel_, StreamConfigFor("on-mono2", 10, "mono2"), feats_, 50);
  ASSERT_TRUE(scores.ok()) << scores.status();
  EXPECT_EQ(*scores, OfflineScores(MonoModelPath(), feats_));
  EXPECT_EQ(admin.Load("mono2", "kaldi/final.mdl").status().code(),
            absl::StatusCode::kAlreadyExists);
}

// Unloading a model in use: its streams keep scoring with it to their end, new streams get
// NOT_FOUND, it is listed UNLOADING until the last stream ends, then freed.
TEST_F(ServerAdminTest, UnloadWhileStreaming) {
  client::AdminClient admin(channel_, kToken);
  std::vector<int64_t> versions;
  client::ScoreStream::Options options;
  options.on_window = [&](const client::ScoreWindow& w) {
    versions.push_back(w.response->models(0).version());
  };
  auto stream = client::ScoreStream::Open(channel_, StreamConfigFor("busy", 10), options);
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE((*stream)->Push(Rows(feats_, 0, 40)).ok());
  ASSERT_TRUE((*stream)->WaitForFrames(40));

  auto unloaded = admin.Unload("mono");
  ASSERT_TRUE(unloaded.ok()) << unloaded.status();
  EXPECT_EQ(unloaded->status(), v1::ModelInfo::UNLOADING);
  EXPECT_EQ(unloaded->active_streams(), 1);
  EXPECT_EQ(client::CheckHealth(channel_, "gmmscore.v1.Scorer/mono").code(),
            absl::StatusCode::kUnavailable);
  auto refused = StreamScores(channel_, StreamConfigFor("new", 10), Rows(feats_, 0, 5), 5);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kNotFound);
  auto listed = admin.List();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].status(), v1::ModelInfo::UNLOADING);

  ASSERT_TRUE((*stream)->Push(Rows(feats_, 40, feats_.rows - 40)).ok());
  ASSERT_TRUE((*stream)->End().ok());
  ASSERT_TRUE((*stream)->Finish().ok());
  const Matrix offline = OfflineScores(MonoModelPath(), feats_);
  ASSERT_EQ((*stream)->NumFramesReady(), feats_.rows);
  for (int32_t t = 0; t < feats_.rows; t += 7) {
    EXPECT_EQ((*stream)->LogLikelihood(t, 3), offline.at(t, 3));
  }
  for (int64_t v : versions) EXPECT_EQ(v, 1);
  // Freed once the stream (and its last window) let go.
  ASSERT_TRUE(WaitFor([&] {
    auto now = admin.List();
    return now.ok() && now->empty();
  }));
  // Its gmmscore_model_bytes series went with it.
  for (const prometheus::MetricFamily& family : server_->metrics().registry().Collect()) {
    if (family.name == "gmmscore_model_bytes") {
      EXPECT_TRUE(family.metric.empty());
    }
  }
  EXPECT_EQ(admin.Unload("mono").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ServerAdminTest, ReplaceServesTheNewVersionToNewStreamsOnly) {
  client::AdminClient admin(channel_, kToken);
  std::vector<int64_t> old_versions;
  client::ScoreStream::Options options;
  options.on_window = [&](const client::ScoreWindow& w) {
    old_versions.push_back(w.response->models(0).version());
  };
  auto old_stream = client::ScoreStream::Open(channel_, StreamConfigFor("old", 10), options);
  ASSERT_TRUE(old_stream.ok());
  ASSERT_TRUE((*old_stream)->Push(Rows(feats_, 0, 20)).ok());
  ASSERT_TRUE((*old_stream)->WaitForFrames(20));

  auto replaced = admin.Load("mono", "kaldi/final.mdl", /*replace=*/true);
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  EXPECT_EQ(replaced->version(), 2);
  std::vector<int64_t> new_versions;
  options.on_window = [&](const client::ScoreWindow& w) {
    new_versions.push_back(w.response->models(0).version());
  };
  auto new_stream = client::ScoreStream::Open(channel_, StreamConfigFor("new", 10), options);
  ASSERT_TRUE(new_stream.ok());
  for (auto* s : {&*old_stream, &*new_stream}) {
    ASSERT_TRUE((*s)->Push(Rows(feats_, (*s)->frames_sent() > 0 ? 20 : 0, 20)).ok());
    ASSERT_TRUE((*s)->End().ok());
    ASSERT_TRUE((*s)->Finish().ok());
  }
  EXPECT_EQ(old_versions, std::vector<int64_t>(4, 1));
  EXPECT_EQ(new_versions, std::vector<int64_t>(2, 2));
}

TEST(ServerStartupTest, NotServingUntilTheModelsAreLoaded) {
  auto server = server::GmmscoreServer::Start(LoopbackConfig());
  ASSERT_TRUE(server.ok()) << server.status();
  auto channel = Connect((*server)->port());
  EXPECT_EQ(client::CheckHealth(channel).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(client::CheckHealth(channel, "gmmscore.v1.Scorer").code(),
            absl::StatusCode::kUnavailable);
  ASSERT_TRUE((*server)->LoadStartupModels().ok());
  EXPECT_TRUE(client::CheckHealth(channel).ok());
  EXPECT_TRUE(client::CheckHealth(channel, "gmmscore.v1.Scorer/mono").ok());
}

TEST_F(ServerAdminTest, HealthPerModel) {
  EXPECT_TRUE(client::CheckHealth(channel_).ok());
  EXPECT_TRUE(client::CheckHealth(channel_, "gmmscore.v1.Scorer").ok());
  EXPECT_TRUE(client::CheckHealth(channel_, "gmmscore.v1.Scorer/mono").ok());
  EXPECT_EQ(client::CheckHealth(channel_, "gmmscore.v1.Scorer/nope").code(),
            absl::StatusCode::kNotFound);
}

// GET /metrics over a plain socket.
std::string HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return "";
  }
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  EXPECT_EQ(write(fd, request.data(), request.size()), ssize_t(request.size()));
  std::string response;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) response.append(buffer, size_t(n));
  close(fd);
  return response;
}

TEST_F(ServerAdminTest, PrometheusEndpoint) {
  ASSERT_TRUE(StreamScores(channel_, StreamConfigFor("metered", 10), feats_, 30).ok());
  EXPECT_FALSE(StreamScores(channel_, StreamConfigFor("bad", 10, "nope"), feats_, 30).ok());
  ASSERT_GT(server_->metrics_port(), 0);
  // The client has its status before the server's OnDone counts the stream out.
  std::string text;
  ASSERT_TRUE(WaitFor([&] {
    text = HttpGet(server_->metrics_port(), "/metrics");
    return text.find("gmmscore_active_streams 0") != std::string::npos;
  })) << text;
  for (const std::string& expected : {
           std::string("gmmscore_active_streams 0"),
           "gmmscore_frames_received_total{model=\"mono\"} " + std::to_string(feats_.rows),
           "gmmscore_frames_scored_total{model=\"mono\"} " + std::to_string(feats_.rows),
           "gmmscore_windows_sent_total " + std::to_string((feats_.rows + 9) / 10),
           std::string("gmmscore_stream_failures_total{reason=\"unknown_model\"} 1"),
           "gmmscore_model_bytes{device=\"cpu\",model=\"mono\",version=\"1\"} " +
               std::to_string(677 * (2 * 39 + 1) * 4),
           std::string("gmmscore_batch_frames_bucket{le=\"10\"}"),
           std::string("gmmscore_queue_wait_seconds_count"),
           std::string("gmmscore_compute_seconds_sum"),
           std::string("gmmscore_window_latency_seconds_count " +
                       std::to_string((feats_.rows + 9) / 10)),
           // The two stages of every window's latency, each counted once a window.
           "gmmscore_window_stage_seconds_count{stage=\"before_write\"} " +
               std::to_string((feats_.rows + 9) / 10),
           "gmmscore_window_stage_seconds_count{stage=\"write\"} " +
               std::to_string((feats_.rows + 9) / 10),
           std::string("gmmscore_device_busy_seconds_total{device=\"cpu\"}"),
           std::string("gmmscore_stream_buffered_bytes 0"),
       }) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
  }
}

// TLS with certificates made by the openssl command: server-only, then mutual.
class ServerTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("command -v openssl >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "no openssl command to make test certificates";
    }
    const std::string d = dir_.file("");
    const std::string script =
        "set -e; cd '" + d +
        "'; "
        "ec='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes'; "
        "openssl req -x509 $ec -keyout ca.key -out ca.crt -days 2 -subj /CN=gmmscore-test-ca; "
        "for n in server client; do "
        "  openssl req $ec -keyout $n.key -out $n.csr -subj /CN=$n; "
        "  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > $n.ext; "
        "  openssl x509 -req -in $n.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 "
        "    -extfile $n.ext -out $n.crt; "
        "done 2>/dev/null";
    WriteFile(dir_.file("make-certs.sh"), script);
    ASSERT_EQ(std::system(("bash '" + dir_.file("make-certs.sh") + "'").c_str()), 0);
  }

  std::unique_ptr<server::GmmscoreServer> StartTls(bool mutual) {
    server::ServerConfig config = LoopbackConfig();
    config.plaintext = false;
    config.tls_cert_file = dir_.file("server.crt");
    config.tls_key_file = dir_.file("server.key");
    if (mutual) config.tls_client_ca_file = dir_.file("ca.crt");
    return StartServer(config);
  }

  absl::Status Score(int port, bool client_cert, bool plaintext = false) {
    client::ChannelOptions o;
    o.server = "127.0.0.1:" + std::to_string(port);
    o.plaintext = plaintext;
    o.ca_cert_file = dir_.file("ca.crt");
    o.server_name_override = "localhost";
    if (client_cert) {
      o.client_cert_file = dir_.file("client.crt");
      o.client_key_file = dir_.file("client.key");
    }
    auto channel = client::MakeChannel(o);
    if (!channel.ok()) return channel.status();
    return StreamScores(*channel, StreamConfigFor("tls", 10), Rows(feats_, 0, 25), 25).status();
  }

  TempDir dir_;
  const Matrix& feats_ = MonoFeatures().at("cards-001");
};

TEST_F(ServerTlsTest, ServerCertificate) {
  auto server = StartTls(false);
  ASSERT_NE(server, nullptr);
  EXPECT_TRUE(Score(server->port(), false).ok());
  EXPECT_EQ(Score(server->port(), false, /*plaintext=*/true).code(),
            absl::StatusCode::kUnavailable);
}

TEST_F(ServerTlsTest, MutualTlsNeedsAClientCertificate) {
  auto server = StartTls(true);
  ASSERT_NE(server, nullptr);
  EXPECT_TRUE(Score(server->port(), true).ok());
  EXPECT_EQ(Score(server->port(), false).code(), absl::StatusCode::kUnavailable);
}

TEST(ServerConfigTest, PlaintextOnlyWhenAsked) {
  server::ServerConfig config = LoopbackConfig();
  config.plaintext = false;
  const absl::Status s = server::GmmscoreServer::Start(config).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--plaintext"), std::string::npos) << s;
  config.tls_cert_file = "/nonexistent.crt";
  config.tls_key_file = "/nonexistent.key";
  EXPECT_EQ(server::GmmscoreServer::Start(config).status().code(), absl::StatusCode::kNotFound);
}

// Two utterances of the Kaldi data with their alignments, as AdaptModel takes them.
v1::AdaptModelRequest AdaptRequest(const std::string& name) {
  const auto alignments = ParseInt32Archive(ReadFile(DataPath("kaldi-mono/ali.txt")));
  v1::AdaptModelRequest request;
  request.set_base_model("mono");
  request.set_name(name);
  for (const std::string key : {"cards-001", "cards-003"}) {
    v1::AdaptUtterance* u = request.add_utterances();
    u->set_key(key);
    const Matrix& feats = MonoFeatures().at(key);
    u->mutable_features()->Add(feats.data.begin(), feats.data.end());
    u->mutable_alignment()->Add(alignments.at(key).begin(), alignments.at(key).end());
  }
  return request;
}

// The model `gmmscore adapt --model-out` writes for the same utterances: MAP with the same
// defaults on the same statistics, through a Kaldi model file.
std::string AdaptedOffline(const v1::AdaptModelRequest& request, const std::string& path) {
  auto base = ReadKaldiModelFile(MonoModelPath());
  EXPECT_TRUE(base.ok());
  ModelStats stats = ModelStats::ForModel(*base, kGmmMeans | kGmmWeights);
  const GmmAccumulator accumulator(*base);
  for (const v1::AdaptUtterance& u : request.utterances()) {
    const Matrix& feats = MonoFeatures().at(u.key());
    const std::vector<int32_t> ali(u.alignment().begin(), u.alignment().end());
    EXPECT_TRUE(accumulator.AccumulateAlignment(feats, ali, &stats).ok());
  }
  auto adapted = MapUpdate(MapOptions{}, stats.gmm, kGmmMeans | kGmmWeights, *base, nullptr);
  EXPECT_TRUE(adapted.ok()) << adapted.status();
  EXPECT_TRUE(WriteKaldiModelFile(*adapted, path, true).ok());
  return path;
}

TEST_F(ServerAdminTest, AdaptModelServesTheAdaptedModelAtOnce) {
  client::AdminClient admin(channel_, kToken);
  const v1::AdaptModelRequest request = AdaptRequest("mono-spk1");
  auto info = admin.Adapt(request);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->name(), "mono-spk1");
  EXPECT_EQ(info->version(), 1);
  EXPECT_EQ(info->status(), v1::ModelInfo::READY);
  EXPECT_EQ(info->format(), "adapted");
  EXPECT_EQ(info->path(), "adapted from mono v1");
  EXPECT_EQ(info->num_gaussians(), 677);
  // A stream gets it at once; its scores are those of the model adapted offline and loaded from
  // a file, and not those of the base.
  auto streamed = StreamScores(channel_, StreamConfigFor("spk", 37, "mono-spk1"), feats_, 10);
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  const Matrix offline = OfflineScores(AdaptedOffline(request, dir_.file("spk1.mdl")), feats_);
  const Matrix base = OfflineScores(MonoModelPath(), feats_);
  ASSERT_EQ(streamed->data.size(), offline.data.size());
  double worst = 0.0, moved = 0.0;
  for (size_t i = 0; i < offline.data.size(); ++i) {
    worst = std::max(worst, double(std::abs(streamed->data[i] - offline.data[i])));
    moved = std::max(moved, double(std::abs(streamed->data[i] - base.data[i])));
  }
  EXPECT_LT(worst, 1e-3);
  EXPECT_GT(moved, 1.0);
  // The same name again needs replace, which makes version 2.
  EXPECT_EQ(admin.Adapt(request).status().code(), absl::StatusCode::kAlreadyExists);
  v1::AdaptModelRequest again = request;
  again.set_replace(true);
  again.set_mean_tau(1e9f);  // the priors kept: the base model's scores
  again.set_weight_tau(1e9f);
  auto second = admin.Adapt(again);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->version(), 2);
  auto kept = StreamScores(channel_, StreamConfigFor("spk2", 37, "mono-spk1"), feats_, 10);
  ASSERT_TRUE(kept.ok());
  for (size_t i = 0; i < base.data.size(); i += 97) EXPECT_NEAR(kept->data[i], base.data[i], 0.05);
}

TEST_F(ServerAdminTest, AdaptModelRefusesBadRequestsClearly) {
  const v1::AdaptModelRequest good = AdaptRequest("x");
  EXPECT_EQ(client::AdminClient(channel_).Adapt(good).status().code(),
            absl::StatusCode::kUnauthenticated);
  client::AdminClient admin(channel_, kToken);
  auto expect = [&](const v1::AdaptModelRequest& r, absl::StatusCode code,
                    const std::string& says) {
    const absl::Status s = admin.Adapt(r).status();
    EXPECT_EQ(s.code(), code) << s;
    EXPECT_NE(s.message().find(says), std::string::npos) << s;
  };
  v1::AdaptModelRequest r = good;
  r.set_base_model("nope");
  expect(r, absl::StatusCode::kNotFound, "nope");
  r = good;
  r.mutable_utterances(1)->mutable_features()->RemoveLast();
  expect(r, absl::StatusCode::kInvalidArgument, "utterance cards-003");
  r = good;
  r.mutable_utterances(0)->set_alignment(5, 9999);
  expect(r, absl::StatusCode::kInvalidArgument, "utterance cards-001: frame 5: transition-id 9999");
  r = good;
  r.mutable_utterances(0)->mutable_alignment()->RemoveLast();
  expect(r, absl::StatusCode::kInvalidArgument, "transition-ids for");
  r = good;
  r.mutable_utterances(0)->clear_alignment();
  expect(r, absl::StatusCode::kInvalidArgument, "one of an alignment, posteriors or a pdf");
  r = good;
  r.mutable_utterances(1)->set_features(40, std::nanf(""));
  expect(r, absl::StatusCode::kInvalidArgument, "frame 1, dimension 1 is nan");
  r = good;
  r.set_update_flags("mq");
  expect(r, absl::StatusCode::kInvalidArgument, "update flags");
  r = good;
  r.set_variance_tau(-1);
  expect(r, absl::StatusCode::kInvalidArgument, "tau");
  // Nothing was registered by the failed calls; the server serves on.
  EXPECT_EQ(admin.Get("x").status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(StreamScores(channel_, StreamConfigFor("s", 37), feats_, 10).ok());
}

TEST(ServerAdaptLimitsTest, FramesBeyondTheLimitAreRefused) {
  TempDir dir;
  WriteFile(dir.file("token"), std::string(kToken) + "\n");
  server::ServerConfig config = LoopbackConfig();
  config.admin_token_file = dir.file("token");
  config.adapt.max_frames = 100;
  auto server = StartServer(config);
  ASSERT_NE(server, nullptr);
  const absl::Status s =
      client::AdminClient(Connect(server->port()), kToken).Adapt(AdaptRequest("x")).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_NE(s.message().find("--max-adapt-frames"), std::string::npos) << s;
}

// Adaptation to a stream's own frames (StreamConfig.keep_frames, AdaptUtterance.from_stream):
// the model adapted to what the stream kept equals the one adapted to the same frames sent in the
// request; a stream keeps its last keep_frames frames; one pdf a frame (e.g. best_state) adapts
// as the transition-ids of those pdfs do.
TEST_F(ServerAdminTest, AdaptModelToTheFramesAStreamKept) {
  client::AdminClient admin(channel_, kToken);
  const auto alignments = ParseInt32Archive(ReadFile(DataPath("kaldi-mono/ali.txt")));
  const auto pdfs = ParseInt32Archive(ReadFile(DataPath("kaldi-mono/pdf_ali.txt")));
  const std::vector<int32_t>& ali = alignments.at("cards-001");
  ASSERT_EQ(int32_t(ali.size()), feats_.rows);
  v1::StreamConfig all = StreamConfigFor("speaker-a", 10);
  all.set_keep_frames(1000);
  ASSERT_TRUE(StreamScores(channel_, all, feats_, 7).ok());
  v1::StreamConfig last50 = StreamConfigFor("speaker-b", 10);
  last50.set_keep_frames(50);
  ASSERT_TRUE(StreamScores(channel_, last50, feats_, 7).ok());

  const auto adapt = [&](const std::string& name, const v1::AdaptUtterance& u) {
    v1::AdaptModelRequest r;
    r.set_base_model("mono");
    r.set_name(name);
    *r.add_utterances() = u;
    return admin.Adapt(r);
  };
  const auto scores = [&](const std::string& model) {
    auto m = StreamScores(channel_, StreamConfigFor("check-" + model, 10, model), feats_, 10);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? *m : Matrix();
  };
  v1::AdaptUtterance kept, sent;
  kept.set_from_stream("speaker-a");
  kept.mutable_alignment()->Add(ali.begin(), ali.end());
  sent.mutable_features()->Add(feats_.data.begin(), feats_.data.end());
  sent.mutable_alignment()->Add(ali.begin(), ali.end());
  ASSERT_TRUE(adapt("from-stream", kept).ok());
  ASSERT_TRUE(adapt("from-request", sent).ok());
  const Matrix from_stream = scores("from-stream");
  EXPECT_EQ(from_stream.data, scores("from-request").data);
  EXPECT_NE(from_stream.data, OfflineScores(MonoModelPath(), feats_).data);

  // The last 50 frames, with the last 50 transition-ids; and as pdfs.
  v1::AdaptUtterance tail, tail_sent, tail_pdfs;
  tail.set_from_stream("speaker-b");
  tail.mutable_alignment()->Add(ali.end() - 50, ali.end());
  const Matrix last = Rows(feats_, feats_.rows - 50, 50);
  tail_sent.mutable_features()->Add(last.data.begin(), last.data.end());
  tail_sent.mutable_alignment()->Add(ali.end() - 50, ali.end());
  tail_pdfs.set_from_stream("speaker-b");
  const std::vector<int32_t>& pdf = pdfs.at("cards-001");
  tail_pdfs.mutable_pdf_alignment()->Add(pdf.end() - 50, pdf.end());
  ASSERT_TRUE(adapt("tail", tail).ok());
  ASSERT_TRUE(adapt("tail-sent", tail_sent).ok());
  ASSERT_TRUE(adapt("tail-pdfs", tail_pdfs).ok());
  const Matrix tail_scores = scores("tail");
  EXPECT_EQ(tail_scores.data, scores("tail-sent").data);
  const Matrix pdf_scores = scores("tail-pdfs");
  ASSERT_EQ(pdf_scores.data.size(), tail_scores.data.size());
  for (size_t i = 0; i < pdf_scores.data.size(); ++i) {
    ASSERT_NEAR(pdf_scores.data[i], tail_scores.data[i], 1e-3) << i;
  }

  // Clear errors, naming the utterance; nothing registered.
  const auto expect = [&](const v1::AdaptUtterance& u, absl::StatusCode code,
                          const std::string& says) {
    const absl::Status st = adapt("bad", u).status();
    EXPECT_EQ(st.code(), code) << st;
    EXPECT_NE(st.message().find(says), std::string::npos) << st;
  };
  v1::AdaptUtterance u = kept;
  u.set_from_stream("nobody");
  expect(u, absl::StatusCode::kNotFound, "no frames kept for stream 'nobody'");
  u = kept;
  u.mutable_features()->Add(feats_.data.begin(), feats_.data.end());
  expect(u, absl::StatusCode::kInvalidArgument, "features or from_stream, not both");
  u = tail;
  u.mutable_alignment()->RemoveLast();
  expect(u, absl::StatusCode::kInvalidArgument, "49 transition-ids for 50 frames");
  u = tail_pdfs;
  u.set_pdf_alignment(3, 56);
  expect(u, absl::StatusCode::kInvalidArgument, "frame 3: pdf 56 is not in the model");
  u = tail_pdfs;
  u.mutable_alignment()->Add(ali.end() - 50, ali.end());
  expect(u, absl::StatusCode::kInvalidArgument, "one of an alignment, posteriors or a pdf");
  EXPECT_EQ(admin.Get("bad").status().code(), absl::StatusCode::kNotFound);
}

// What a stream may keep: within --max-adapt-frames, with a stream_id, one live stream an id,
// all streams within --max-kept-bytes; the frames go --kept-frames-ttl after the stream ends.
TEST(ServerKeptFramesTest, LimitsAndTimeToLive) {
  TempDir dir;
  WriteFile(dir.file("token"), std::string(kToken) + "\n");
  server::ServerConfig config = LoopbackConfig();
  config.admin_token_file = dir.file("token");
  config.adapt.max_frames = 200;
  config.adapt.max_kept_bytes = 300 * 39 * 4;  // one stream of 200 frames (and its entry), not two
  config.adapt.kept_ttl = absl::ZeroDuration();
  auto server = StartServer(config);
  ASSERT_NE(server, nullptr);
  auto channel = Connect(server->port());
  const Matrix& feats = MonoFeatures().at("cards-001");
  const auto stream_status = [&](const std::string& id, int32_t keep) {
    v1::StreamConfig c = StreamConfigFor(id, 10);
    c.set_keep_frames(keep);
    return StreamScores(channel, c, feats, 10).status();
  };
  absl::Status st = stream_status("a", 201);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_NE(st.message().find("--max-adapt-frames"), std::string::npos) << st;
  st = stream_status("", 10);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_NE(st.message().find("needs a stream_id"), std::string::npos) << st;

  // A live stream keeps "live": a second one under the id is refused, and a second id would
  // pass --max-kept-bytes.
  client::ScoreStream::Options options;
  options.keep_scores = false;
  v1::StreamConfig live = StreamConfigFor("live", 10);
  live.set_keep_frames(200);
  auto first = client::ScoreStream::Open(channel, live, options);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE((*first)->Push(feats).ok());
  ASSERT_TRUE(WaitFor([&] {
    v1::AdaptModelRequest r;
    r.set_base_model("mono");
    r.set_name("probe");
    r.add_utterances()->set_from_stream("live");
    // Kept frames exist once the stream's config is in: the labels are then what is wrong.
    return client::AdminClient(channel, kToken).Adapt(r).status().code() ==
           absl::StatusCode::kInvalidArgument;
  }));
  st = stream_status("live", 10);
  EXPECT_EQ(st.code(), absl::StatusCode::kAlreadyExists) << st;
  st = stream_status("other", 200);
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted) << st;
  EXPECT_NE(st.message().find("--max-kept-bytes"), std::string::npos) << st;
  ASSERT_TRUE((*first)->End().ok());
  ASSERT_TRUE((*first)->Finish().ok());
  // Ended, with a time to live of 0: gone once the server has seen the stream end (its OnDone
  // may come just after the client's Finish), and its bytes free for another stream.
  v1::AdaptModelRequest r;
  r.set_base_model("mono");
  r.set_name("late");
  v1::AdaptUtterance* u = r.add_utterances();
  u->set_from_stream("live");
  u->add_pdf_alignment(0);
  EXPECT_TRUE(WaitFor([&] {
    st = client::AdminClient(channel, kToken).Adapt(r).status();
    return st.code() == absl::StatusCode::kNotFound;
  })) << st;
  EXPECT_TRUE(stream_status("other", 200).ok());
}

}  // namespace
}  // namespace gmmscore::testing

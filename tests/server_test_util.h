// Helpers for the daemon's tests: a gmmscored running in-process on a loopback port (127.0.0.1,
// a port the kernel picks), channels to it, and offline scores to compare streams against.
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "client/scorer_client.h"
#include "formats/model_io.h"
#include "kernels/cpu/cpu_scorer.h"
#include "server/server.h"
#include "tests/test_util.h"

namespace gmmscore::testing {

inline std::string MonoModelPath() { return DataPath("kaldi-mono/final.mdl"); }

// Plaintext on 127.0.0.1, the Kaldi monophone model as "mono", short timeouts for tests.
inline server::ServerConfig LoopbackConfig() {
  server::ServerConfig c;
  c.listen = "127.0.0.1:0";
  c.plaintext = true;
  c.models = {{"mono", MonoModelPath()}};
  c.scorer_threads = 2;
  c.drain_timeout = absl::Seconds(5);
  return c;
}

inline std::unique_ptr<server::GmmscoreServer> StartServer(server::ServerConfig config) {
  auto server = server::GmmscoreServer::Start(std::move(config));
  EXPECT_TRUE(server.ok()) << server.status();
  if (!server.ok()) return nullptr;
  const absl::Status loaded = (*server)->LoadStartupModels();
  EXPECT_TRUE(loaded.ok()) << loaded;
  return *std::move(server);
}

// A loopback server on `backend` ("cpu", "cuda") with its startup models loaded; the error where
// it does not start (no usable GPU) or a model does not load.
inline absl::StatusOr<std::unique_ptr<server::GmmscoreServer>> StartOnBackend(
    const std::string& backend) {
  server::ServerConfig config = LoopbackConfig();
  config.backend = backend;
  auto server = server::GmmscoreServer::Start(config);
  if (!server.ok()) return server.status();
  if (absl::Status loaded = (*server)->LoadStartupModels(); !loaded.ok()) return loaded;
  return server;
}

inline std::shared_ptr<grpc::Channel> Connect(int port) {
  client::ChannelOptions o;
  o.server = "127.0.0.1:" + std::to_string(port);
  o.plaintext = true;
  return *client::MakeChannel(o);
}

inline v1::StreamConfig StreamConfigFor(const std::string& stream_id, int32_t window_frames,
                                        const std::string& model = "mono", int32_t dim = 39) {
  v1::StreamConfig c;
  c.set_stream_id(stream_id);
  c.add_models(model);
  c.set_dim(dim);
  c.set_window_frames(window_frames);
  return c;
}

// The shipped features, by utterance.
inline const std::map<std::string, Matrix>& MonoFeatures() {
  static const auto* table =
      new std::map<std::string, Matrix>(ReadTable("ark:" + DataPath("kaldi-mono/feats.ark")));
  return *table;
}

inline Matrix OfflineScores(const std::string& model_path, const Matrix& feats) {
  auto loaded = LoadModel(model_path);
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  CpuScorer scorer(loaded->model, 1);
  Matrix out;
  EXPECT_TRUE(scorer.Score(feats, &out).ok());
  return out;
}

// Rows [first, first + n) of m.
inline Matrix Rows(const Matrix& m, int32_t first, int32_t n) {
  Matrix out(n, m.cols);
  std::copy_n(m.row(first), size_t(n) * m.cols, out.data.data());
  return out;
}

// Streams feats through a ScoreStream in chunks; returns the scores of every window received,
// in order, as one matrix, and the window sizes in *windows if given.
inline absl::StatusOr<Matrix> StreamScores(const std::shared_ptr<grpc::Channel>& channel,
                                           const v1::StreamConfig& config, const Matrix& feats,
                                           int32_t chunk_frames,
                                           std::vector<int32_t>* windows = nullptr) {
  Matrix out;
  client::ScoreStream::Options options;
  options.chunk_frames = chunk_frames;
  options.keep_scores = false;
  options.on_window = [&](const client::ScoreWindow& w) {
    out.cols = w.scores.cols;
    out.rows += w.scores.rows;
    out.data.insert(out.data.end(), w.scores.data.begin(), w.scores.data.end());
    if (windows != nullptr) windows->push_back(w.scores.rows);
  };
  auto stream = client::ScoreStream::Open(channel, config, options);
  if (!stream.ok()) return stream.status();
  if (absl::Status s = (*stream)->Push(feats); !s.ok()) return s;
  if (absl::Status s = (*stream)->End(); !s.ok()) return s;
  if (absl::Status s = (*stream)->Finish(); !s.ok()) return s;
  return out;
}

// Polls cond every 10 ms for up to timeout.
template <typename Cond>
bool WaitFor(Cond cond, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return cond();
}

}  // namespace gmmscore::testing

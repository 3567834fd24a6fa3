// The Align RPC against a real gmmscored in-process, on the Kaldi data of tests/data/kaldi-mono,
// on the CPU backend and on a GPU: 64 concurrent calls return Kaldi's alignments (what `gmmscore
// align` writes offline) and scores, a malformed graph in one call fails that call alone, and the
// limits answer as documented. (`gmmscore align --server`: tests/server_align_cli_test.cc.)
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include "proto/wire_codec.h"
#include "tests/server_test_util.h"

namespace gmmscore::testing {
namespace {

// The binary FST of each key of graphs.fsts: each entry is "KEY " and the FST, up to the next.
std::map<std::string, std::string> GraphBytes(const std::vector<std::string>& keys) {
  const std::string archive = ReadFile(DataPath("kaldi-mono/graphs.fsts"));
  std::map<std::string, std::string> graphs;
  std::vector<size_t> starts;
  for (const std::string& key : keys) starts.push_back(archive.find(key + " \xd6\xfd\xb2\x7e"));
  starts.push_back(archive.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const size_t begin = starts[i] + keys[i].size() + 1;
    graphs[keys[i]] = archive.substr(begin, starts[i + 1] - begin);
  }
  return graphs;
}

std::map<std::string, std::vector<int32_t>> KaldiAlignments() {
  return ParseInt32Archive(ReadFile(DataPath("kaldi-mono/ali.txt")));
}

// On the CPU backend (the CPU aligner, Kaldi's beam) and the CUDA one (the GPU's exact Viterbi,
// batched across calls): the same answers. The CUDA run skips without a usable GPU.
class ServerAlignTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto started = StartOnBackend(GetParam());
    if (GetParam() == "cuda" && !started.ok()) {
      GTEST_SKIP() << "no usable CUDA device: " << started.status();
    }
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
    channel_ = Connect(server_->port());
    kaldi_ = KaldiAlignments();
    std::vector<std::string> keys;
    for (const auto& [key, ali] : kaldi_) keys.push_back(key);
    graphs_ = GraphBytes(keys);
  }

  v1::AlignRequest Request(const std::string& key) const {
    v1::AlignRequest r;
    r.set_utterance_id(key);
    r.set_model("mono");
    r.set_dim(39);
    wire::AppendFloat32(MonoFeatures().at(key).data, r.mutable_features());
    r.set_graph(graphs_.at(key));
    r.set_beam(6);
    r.set_retry_beam(40);
    r.set_transition_scale(1.0f);
    r.set_self_loop_scale(0.1f);
    r.set_acoustic_scale(0.1f);
    return r;
  }

  std::unique_ptr<server::GmmscoreServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::map<std::string, std::vector<int32_t>> kaldi_;
  std::map<std::string, std::string> graphs_;
};

TEST_P(ServerAlignTest, ConcurrentCallsReturnKaldisAlignmentsAndABadGraphFailsAlone) {
  ASSERT_EQ(kaldi_.size(), 6u);
  std::vector<std::string> keys;
  for (const auto& [key, ali] : kaldi_) keys.push_back(key);
  const std::map<std::string, double> kaldi_scores = {
      {"cards-001", -973.549},      {"cards-003", -1336.432},       {"lib-0880", -2700.408},
      {"raw-goforward", -2365.358}, {"sp0.9-cards-002", -1943.745}, {"sp1.1-lib-0920", -5307.729}};
  std::atomic<int32_t> right{0};
  std::vector<std::thread> threads;
  for (int32_t i = 0; i < 64; ++i) {
    threads.emplace_back([&, i] {
      const std::string& key = keys[size_t(i) % keys.size()];
      v1::AlignRequest request = Request(key);
      if (i == 17) {  // a graph cut short: this call fails, the others do not notice
        request.mutable_graph()->resize(request.graph().size() / 2);
        const auto broken = client::Align(channel_, request);
        EXPECT_EQ(broken.status().code(), absl::StatusCode::kInvalidArgument) << broken.status();
        EXPECT_NE(broken.status().message().find("utterance '" + key + "'"), std::string::npos)
            << broken.status();
        return;
      }
      const auto response = client::Align(channel_, request);
      ASSERT_TRUE(response.ok()) << key << ": " << response.status();
      EXPECT_EQ(response->utterance_id(), key);
      const std::vector<int32_t> tids(response->transition_ids().begin(),
                                      response->transition_ids().end());
      EXPECT_EQ(tids, kaldi_.at(key)) << key;
      EXPECT_NEAR(response->score(), kaldi_scores.at(key), 0.01) << key;
      EXPECT_NEAR(response->log_likelihood(), kaldi_scores.at(key) / 0.1, 0.1) << key;
      EXPECT_EQ(response->model().name(), "mono");
      if (tids == kaldi_.at(key)) ++right;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(right.load(), 63);
}

TEST_P(ServerAlignTest, RefusesWhatItCannotAlign) {
  v1::AlignRequest unknown = Request("cards-001");
  unknown.set_model("nope");
  EXPECT_EQ(client::Align(channel_, unknown).status().code(), absl::StatusCode::kNotFound);
  v1::AlignRequest wrong_dim = Request("cards-001");
  wrong_dim.set_dim(13);
  EXPECT_EQ(client::Align(channel_, wrong_dim).status().code(), absl::StatusCode::kInvalidArgument);
  v1::AlignRequest beams = Request("cards-001");
  beams.set_retry_beam(3);
  const auto refused = client::Align(channel_, beams);
  EXPECT_NE(refused.status().message().find("beams do not make sense"), std::string::npos)
      << refused.status();
  // A much longer utterance's graph: more HMM states than these frames, no path.
  v1::AlignRequest misfit = Request("cards-001");
  misfit.set_graph(graphs_.at("sp1.1-lib-0920"));
  EXPECT_EQ(client::Align(channel_, misfit).status().code(), absl::StatusCode::kFailedPrecondition);
}

INSTANTIATE_TEST_SUITE_P(Backends, ServerAlignTest, ::testing::Values("cpu", "cuda"),
                         [](const ::testing::TestParamInfo<std::string>& backend) {
                           return backend.param;
                         });

}  // namespace
}  // namespace gmmscore::testing

// `gmmscore align --server` against a real gmmscored in-process, on the CPU backend and on a GPU:
// the command line and outputs of offline alignment, the alignment by the daemon's Align RPC
// (tests/server_align_test.cc tests the RPC itself). Apart from it because it runs the gmmscore
// command, which the daemon's TSan build (scripts/sanitize.sh) does not build.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "tests/server_test_util.h"

namespace gmmscore::testing {
namespace {

// The gmmscore command: $GMMSCORE_CLI where set (a GPU machine runs a copy), else this build's.
std::string Cli() {
  const char* cli = std::getenv("GMMSCORE_CLI");
  return cli != nullptr ? cli : GMMSCORE_CLI;
}

// A daemon on the backend of the parameter serving the Kaldi monophone model as "mono"; the CUDA
// run skips without a usable GPU.
class ServerAlignCliTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto started = StartOnBackend(GetParam());
    if (GetParam() == "cuda" && !started.ok()) {
      GTEST_SKIP() << "no usable CUDA device: " << started.status();
    }
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
  }

  std::unique_ptr<server::GmmscoreServer> server_;
};

// gmmscore align --server: the same command line and outputs as offline, the alignment by the
// daemon.
TEST_P(ServerAlignCliTest, TheCommandThroughTheServerWritesWhatItWritesOffline) {
  TempDir dir;
  const std::string ali = dir.file("ali.txt"), scores = dir.file("scores.txt"),
                    log = dir.file("log");
  const std::string cmd = Cli() + " align --server 127.0.0.1:" + std::to_string(server_->port()) +
                          " --plaintext --parallel 4 --transition-scale=1.0 --acoustic-scale=0.1"
                          " --self-loop-scale=0.1 --beam=6 --retry-beam=40 mono ark:" +
                          DataPath("kaldi-mono/graphs.fsts") +
                          " ark:" + DataPath("kaldi-mono/feats.ark") + " ark,t:" + ali +
                          " ark,t:" + scores + " 2>" + log;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << ReadFile(log);
  EXPECT_EQ(ReadFile(ali), ReadFile(DataPath("kaldi-mono/ali.txt")));
  EXPECT_NE(ReadFile(log).find("Done 6, errors on 0"), std::string::npos) << ReadFile(log);
  std::istringstream ours(ReadFile(scores)), kaldi(ReadFile(DataPath("kaldi-mono/ali_scores.txt")));
  std::string key_a, key_b;
  double a = 0, b = 0;
  int32_t n = 0;
  while (ours >> key_a >> a && kaldi >> key_b >> b) {
    EXPECT_EQ(key_a, key_b);
    EXPECT_NEAR(a, b, 0.01) << key_a;
    ++n;
  }
  EXPECT_EQ(n, 6);
}

INSTANTIATE_TEST_SUITE_P(Backends, ServerAlignCliTest, ::testing::Values("cpu", "cuda"),
                         [](const ::testing::TestParamInfo<std::string>& backend) {
                           return backend.param;
                         });

}  // namespace
}  // namespace gmmscore::testing

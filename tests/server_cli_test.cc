// The commands that talk to gmmscored, run as a user would against an in-process server:
// `gmmscore stream` writes the same bytes as `gmmscore score`, `gmmscore health` and a short
// `gmmscore bench-stream` work.
#include <cstdio>
#include <cstdlib>

#include "tests/server_test_util.h"

namespace gmmscore::testing {
namespace {

// Runs a shell command; returns its exit status and stdout.
int Shell(const std::string& command, std::string* out = nullptr) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  std::string text;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) text.append(buffer, n);
  const int status = pclose(pipe);
  if (out != nullptr) *out = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class ServerCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = StartServer(LoopbackConfig());
    ASSERT_NE(server_, nullptr);
    address_ = "127.0.0.1:" + std::to_string(server_->port());
  }
  std::unique_ptr<server::GmmscoreServer> server_;
  std::string address_;
  TempDir dir_;
};

TEST_F(ServerCliTest, StreamWritesWhatScoreWrites) {
  const std::string feats = "ark:" + DataPath("kaldi-mono/feats.ark");
  ASSERT_EQ(Shell(std::string(GMMSCORE_CLI) + " score --quiet --model " + MonoModelPath() +
                  " --feats " + feats + " --out ark:" + dir_.file("score.ark")),
            0);
  // Windows, chunks and parallel streams of every size give the same archive.
  for (const char* options : {"", " --window 7 --chunk-frames 3 --parallel 1",
                              " --window 0 --chunk-frames 1000 --parallel 6"}) {
    std::string log;
    ASSERT_EQ(Shell(std::string(GMMSCORE_CLI) + " stream --plaintext --server " + address_ +
                        " --model mono --feats " + feats + " --out ark:" + dir_.file("stream.ark") +
                        options + " 2>&1",
                    &log),
              0)
        << log;
    EXPECT_NE(log.find("gmmscore stream: 6 utterances, 1598 frames"), std::string::npos) << log;
    EXPECT_EQ(ReadFile(dir_.file("stream.ark")), ReadFile(dir_.file("score.ark"))) << options;
  }
}

TEST_F(ServerCliTest, StreamFailsClearlyOnAnUnknownModel) {
  std::string log;
  EXPECT_EQ(Shell(std::string(GMMSCORE_CLI) + " stream --plaintext --server " + address_ +
                      " --model nope --feats ark:" + DataPath("kaldi-mono/feats.ark") +
                      " --out ark:" + dir_.file("x.ark") + " 2>&1",
                  &log),
            255);
  EXPECT_NE(log.find("utterance cards-001: stream 'cards-001': no model 'nope'"), std::string::npos)
      << log;
}

TEST_F(ServerCliTest, HealthAndBenchStream) {
  std::string out;
  EXPECT_EQ(Shell(std::string(GMMSCORE_CLI) + " health --plaintext --server " + address_, &out), 0);
  EXPECT_EQ(out, "SERVING\n");
  EXPECT_EQ(Shell(std::string(GMMSCORE_CLI) + " health --plaintext --server " + address_ +
                  " --service gmmscore.v1.Scorer/nope 2>/dev/null"),
            255);
  ASSERT_EQ(Shell(std::string(GMMSCORE_CLI) + " bench-stream --plaintext --server " + address_ +
                      " --model mono --streams 4 --seconds 1 --warmup-seconds 0.2 2>/dev/null",
                  &out),
            0);
  EXPECT_NE(out.find("streams: 4 of 4 finished OK"), std::string::npos) << out;
  EXPECT_NE(out.find("frames:  400 scored"), std::string::npos) << out;
  EXPECT_NE(out.find("p99"), std::string::npos) << out;
  // Windows checked by header (the default) and decoded, in the 16-bit and sparse encodings.
  for (const std::string options :
       {"--encoding relative16", "--encoding relative16 --decode-scores",
        "--encoding beam-sparse --beam 5 --max-states 3",
        "--encoding beam-sparse --decode-scores"}) {
    ASSERT_EQ(Shell(std::string(GMMSCORE_CLI) + " bench-stream --plaintext --server " + address_ +
                        " --model mono --streams 3 --seconds 0.5 --warmup-seconds 0.1 " + options +
                        " 2>/dev/null",
                    &out),
              0)
        << options;
    EXPECT_NE(out.find("streams: 3 of 3 finished OK"), std::string::npos) << options << out;
    EXPECT_NE(out.find("frames:  150 scored"), std::string::npos) << options << out;
  }
  // Split over three processes (5 streams: shares of 1, 2 and 2): the same totals, one report.
  ASSERT_EQ(Shell(std::string(GMMSCORE_CLI) + " bench-stream --plaintext --server " + address_ +
                      " --model mono --streams 5 --processes 3 --seconds 1 --warmup-seconds 0.2 "
                      "2>/dev/null",
                  &out),
            0);
  EXPECT_NE(out.find("streams: 5 of 5 finished OK"), std::string::npos) << out;
  EXPECT_NE(out.find("frames:  500 scored"), std::string::npos) << out;
  EXPECT_NE(out.find("3 processes"), std::string::npos) << out;
  EXPECT_EQ(Shell(std::string(GMMSCORE_CLI) + " bench-stream --plaintext --server " + address_ +
                  " --model mono --streams 2 --processes 3 2>/dev/null"),
            255)
      << "more processes than streams";
}

}  // namespace
}  // namespace gmmscore::testing

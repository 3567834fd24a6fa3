// gmmscore compute-feats as Kaldi's compute-mfcc-feats + apply-cmvn + add-deltas in one command,
// on the recordings tests/data/kaldi-mono was made from, through the wav.scp its README's
// pipeline implies (a raw file and the speed-perturbed copies through sox pipes); Kaldi's exit
// status and log line; --config; speaker CMVN; and score --wav against score --feats.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "feat/cmvn.h"
#include "tests/test_util.h"
#include "tests/wave_test_util.h"

namespace gmmscore::testing {
namespace {

constexpr char kRoot[] = "/usr/share/pocketsphinx/test/data/";

int Gmmscore(const std::string& arguments, const std::string& log) {
  const int status =
      std::system((std::string(GMMSCORE_CLI) + " " + arguments + " 2>" + log).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string KaldiMonoWavScp() {
  const std::string d = kRoot;
  // sox -D: no dither, so the speed-perturbed copies are the same on every run.
  return "cards-001 " + d + "cards/001.wav\n" + "cards-003 " + d + "cards/003.wav\n" + "lib-0880 " +
         d + "librivox/sense_and_sensibility_01_austen_64kb-0880.wav\n" +
         "raw-goforward sox -t raw -r 16000 -e signed -b 16 -c 1 " + d +
         "goforward.raw -t wav - |\n" + "sp0.9-cards-002 sox -D " + d +
         "cards/002.wav -t wav - speed 0.9 |\n" + "sp1.1-lib-0920 sox -D " + d +
         "librivox/sense_and_sensibility_01_austen_64kb-0920.wav -t wav - speed 1.1 |\n";
}

bool HaveRecordingsAndSox() {
  return std::filesystem::exists(std::string(kRoot) + "cards/001.wav") &&
         std::system("sox --version >/dev/null 2>&1") == 0;
}

float WorstDifference(const Matrix& a, const Matrix& b) {
  float worst = 0;
  for (size_t i = 0; i < a.data.size(); ++i)
    worst = std::max(worst, std::abs(a.data[i] - b.data[i]));
  return worst;
}

TEST(ComputeFeatsCliTest, ReproducesKaldiMonoFeaturesAndScores) {
  if (!HaveRecordingsAndSox()) GTEST_SKIP() << "needs pocketsphinx-testdata and sox installed";
  TempDir dir;
  WriteFile(dir.file("wav.scp"), KaldiMonoWavScp());
  WriteFile(dir.file("mfcc.conf"), "--dither=0\n--use-energy=false\n");
  ASSERT_EQ(Gmmscore("compute-feats --config=" + dir.file("mfcc.conf") +
                         " --cmvn=utterance --delta-order=2 scp:" + dir.file("wav.scp") +
                         " ark:" + dir.file("feats.ark"),
                     dir.file("log")),
            0)
      << ReadFile(dir.file("log"));
  EXPECT_NE(ReadFile(dir.file("log")).find("Done 6 out of 6 utterances."), std::string::npos);
  const auto ours = ReadTable("ark:" + dir.file("feats.ark"));
  const auto kaldi = ReadTable("ark:" + DataPath("kaldi-mono/feats.ark"));
  ASSERT_EQ(ours.size(), 6u);
  for (const auto& [key, ref] : kaldi) {
    ASSERT_EQ(ours.at(key).rows, ref.rows) << key;
    ASSERT_EQ(ours.at(key).cols, ref.cols) << key;
    EXPECT_LT(WorstDifference(ours.at(key), ref), 1e-3) << key;
  }
  // Scoring them gives Kaldi's gmm-compute-likes output on Kaldi's features.
  ASSERT_EQ(Gmmscore("score --quiet --model " + DataPath("kaldi-mono/final.mdl") + " --feats ark:" +
                         dir.file("feats.ark") + " --out ark:" + dir.file("ll.ark"),
                     dir.file("log")),
            0)
      << ReadFile(dir.file("log"));
  const auto ll = ReadTable("ark:" + dir.file("ll.ark"));
  for (const auto& [key, ref] : ReadTable("ark:" + DataPath("kaldi-mono/loglikes.ark"))) {
    EXPECT_LT(WorstDifference(ll.at(key), ref), 5e-3) << key;
  }
  // score --wav with the same front end in a config file: the same scores, bit for bit.
  WriteFile(dir.file("fe.conf"),
            "--dither=0\n--use-energy=false\n--cmvn=utterance  # apply-cmvn\n--delta-order=2\n");
  ASSERT_EQ(Gmmscore("score --quiet --model " + DataPath("kaldi-mono/final.mdl") +
                         " --wav scp:" + dir.file("wav.scp") + " --feat-config " +
                         dir.file("fe.conf") + " --out ark:" + dir.file("ll_wav.ark"),
                     dir.file("log")),
            0)
      << ReadFile(dir.file("log"));
  EXPECT_EQ(ReadFile(dir.file("ll_wav.ark")), ReadFile(dir.file("ll.ark")));
}

TEST(ComputeFeatsCliTest, CommandLineOverridesConfigAndSpeakerCmvnPoolsUtterances) {
  TempDir dir;
  WriteFile(dir.file("a.wav"), WaveBytes({RandomWave(8000, 1)}, 16000));
  WriteFile(dir.file("b.wav"), WaveBytes({RandomWave(12000, 2)}, 16000));
  WriteFile(dir.file("wav.scp"),
            "a " + dir.file("a.wav") + "\nb cat " + dir.file("b.wav") + " |\n");
  WriteFile(dir.file("utt2spk"), "a s1\nb s1\n");
  WriteFile(dir.file("mfcc.conf"), "--dither=0\n--num-ceps=20\n");
  ASSERT_EQ(Gmmscore("compute-feats --config=" + dir.file("mfcc.conf") + " --num-ceps=13 scp:" +
                         dir.file("wav.scp") + " ark:" + dir.file("raw.ark") +
                         " --write-utt2dur=ark,t:" + dir.file("utt2dur"),
                     dir.file("log")),
            0)
      << ReadFile(dir.file("log"));
  const auto raw = ReadTable("ark:" + dir.file("raw.ark"));
  ASSERT_EQ(raw.at("a").cols, 13);
  EXPECT_EQ(raw.at("a").rows, 48);
  EXPECT_EQ(ReadFile(dir.file("utt2dur")), "a 0.5 \nb 0.75 \n");

  ASSERT_EQ(Gmmscore("compute-feats --config=" + dir.file("mfcc.conf") +
                         " --num-ceps=13 --cmvn=speaker --norm-vars --utt2spk=ark:" +
                         dir.file("utt2spk") + " scp:" + dir.file("wav.scp") +
                         " ark:" + dir.file("spk.ark"),
                     dir.file("log")),
            0)
      << ReadFile(dir.file("log"));
  CmvnStats stats(13);
  stats.AddFrames(raw.at("a"));
  stats.AddFrames(raw.at("b"));
  const auto spk = ReadTable("ark:" + dir.file("spk.ark"));
  for (const char* key : {"a", "b"}) {
    Matrix expect = raw.at(key);
    ApplyCmvn(stats, true, &expect);
    EXPECT_LT(WorstDifference(spk.at(key), expect), 1e-5) << key;
  }
}

TEST(ComputeFeatsCliTest, KaldisExitStatusAndErrors) {
  TempDir dir;
  WriteFile(dir.file("a.wav"), WaveBytes({RandomWave(8000, 1)}, 16000));
  WriteFile(dir.file("wav.scp"), "a " + dir.file("a.wav") + "\n");
  // Every utterance skipped: Kaldi's "Done 0 out of 1" and status 1.
  EXPECT_EQ(Gmmscore("compute-feats --min-duration=1 scp:" + dir.file("wav.scp") +
                         " ark:" + dir.file("f.ark"),
                     dir.file("log")),
            1);
  EXPECT_NE(ReadFile(dir.file("log")).find("Done 0 out of 1 utterances."), std::string::npos);
  // Audio at another rate than --sample-frequency: a warning naming the utterance, no output.
  EXPECT_EQ(Gmmscore("compute-feats --sample-frequency=8000 scp:" + dir.file("wav.scp") +
                         " ark:" + dir.file("f.ark"),
                     dir.file("log")),
            1);
  EXPECT_NE(ReadFile(dir.file("log")).find("utterance a"), std::string::npos);
  // A truncated file is an error naming it.
  WriteFile(dir.file("cut.wav"), ReadFile(dir.file("a.wav")).substr(0, 3000));
  WriteFile(dir.file("cut.scp"), "cut " + dir.file("cut.wav") + "\n");
  EXPECT_EQ(Gmmscore("compute-feats scp:" + dir.file("cut.scp") + " ark:" + dir.file("f.ark"),
                     dir.file("log")),
            255);
  EXPECT_NE(ReadFile(dir.file("log")).find("cut.wav"), std::string::npos);
  // A config line that is not an option names the file and line.
  WriteFile(dir.file("bad.conf"), "--dither=0\n--num-ceps=lots\n");
  EXPECT_EQ(Gmmscore("compute-feats --config=" + dir.file("bad.conf") +
                         " scp:" + dir.file("wav.scp") + " ark:" + dir.file("f.ark"),
                     dir.file("log")),
            255);
  EXPECT_NE(ReadFile(dir.file("log")).find("bad.conf:2"), std::string::npos);
  // A config file past 1 MiB is refused, not read in part: its last line would be lost.
  WriteFile(dir.file("huge.conf"), std::string(1 << 20, '\n') + "--num-ceps=lots\n");
  EXPECT_EQ(Gmmscore("compute-feats --config=" + dir.file("huge.conf") +
                         " scp:" + dir.file("wav.scp") + " ark:" + dir.file("f.ark"),
                     dir.file("log")),
            255);
  EXPECT_NE(ReadFile(dir.file("log")).find("huge.conf: over 1 MiB"), std::string::npos);
  // Wrong number of arguments: usage, status 1.
  EXPECT_EQ(Gmmscore("compute-feats scp:" + dir.file("wav.scp"), dir.file("log")), 1);
}

}  // namespace
}  // namespace gmmscore::testing

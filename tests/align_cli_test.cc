// gmmscore align as a drop-in for Kaldi's gmm-align-compiled, on the real Kaldi data in
// tests/data/kaldi-mono: with the options Kaldi's ali.txt was made with, the same alignments
// (byte for byte, text archive) and the same scores (within 0.01), through files and through
// piped specifiers as Kaldi recipes pass them; Kaldi's usage errors and exit status.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "formats/model_io.h"
#include "tests/test_util.h"

namespace gmmscore::testing {
namespace {

constexpr char kOptions[] =
    " --transition-scale=1.0 --acoustic-scale=0.1 --self-loop-scale=0.1 --beam=6"
    " --retry-beam=40 ";

std::string Align(const std::string& arguments, const std::string& log) {
  return std::string(GMMSCORE_CLI) + " align" + arguments + " 2>" + log;
}

std::map<std::string, double> ReadScores(const std::string& path) {
  std::map<std::string, double> scores;
  std::istringstream in(ReadFile(path));
  std::string key;
  double value = 0;
  while (in >> key >> value) scores[key] = value;
  return scores;
}

void ExpectKaldiOutputs(const std::string& ali, const std::string& scores) {
  EXPECT_EQ(ReadFile(ali), ReadFile(DataPath("kaldi-mono/ali.txt")));
  const auto ours = ReadScores(scores), kaldi = ReadScores(DataPath("kaldi-mono/ali_scores.txt"));
  ASSERT_EQ(ours.size(), kaldi.size());
  for (const auto& [key, value] : kaldi) EXPECT_NEAR(ours.at(key), value, 0.01) << key;
}

TEST(AlignCliTest, GivesKaldisAlignmentsAndScores) {
  TempDir dir;
  const std::string ali = dir.file("ali.txt"), scores = dir.file("scores.txt"),
                    log = dir.file("log");
  const std::string cmd =
      Align(std::string(kOptions) + DataPath("kaldi-mono/final.mdl") +
                " ark:" + DataPath("kaldi-mono/graphs.fsts") +
                " ark:" + DataPath("kaldi-mono/feats.ark") + " ark,t:" + ali + " ark,t:" + scores,
            log);
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << ReadFile(log);
  ExpectKaldiOutputs(ali, scores);
  const std::string messages = ReadFile(log);
  EXPECT_NE(messages.find("Overall log-likelihood per frame is"), std::string::npos) << messages;
  EXPECT_NE(messages.find("over 1598 frames."), std::string::npos) << messages;
  EXPECT_NE(messages.find("Done 6, errors on 0"), std::string::npos) << messages;
}

// --ctm: the phone segments ali-to-phones --ctm-output writes; laid out frame by frame they are
// Kaldi's per-frame phones (phone_ali.txt, ali-to-phones --per-frame of ali.txt).
TEST(AlignCliTest, WritesPhoneSegmentsAsAliToPhonesDoes) {
  TempDir dir;
  const std::string ctm = dir.file("ali.ctm"), log = dir.file("log");
  const std::string cmd =
      Align(std::string(kOptions) + "--ctm=" + ctm + " " + DataPath("kaldi-mono/final.mdl") +
                " ark:" + DataPath("kaldi-mono/graphs.fsts") +
                " ark:" + DataPath("kaldi-mono/feats.ark") + " ark:/dev/null",
            log);
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << ReadFile(log);
  std::map<std::string, std::vector<int>> per_frame;
  std::istringstream lines(ReadFile(ctm));
  std::string utt, channel, start, duration;
  int phone = 0;
  std::string first_line;
  while (lines >> utt >> channel >> start >> duration >> phone) {
    if (first_line.empty()) first_line = utt + " " + channel + " " + start + " " + duration;
    const int frames = int(std::lround(std::stod(duration) * 100));
    per_frame[utt].insert(per_frame[utt].end(), frames, phone);
  }
  EXPECT_EQ(first_line, "cards-001 1 0.00 0.17") << "two decimals, as ali-to-phones";
  std::istringstream kaldi(ReadFile(DataPath("kaldi-mono/phone_ali.txt")));
  std::string line;
  int32_t utterances = 0;
  while (std::getline(kaldi, line)) {
    std::istringstream words(line);
    std::string key;
    words >> key;
    std::vector<int> phones;
    while (words >> phone) phones.push_back(phone);
    EXPECT_EQ(per_frame[key], phones) << key;
    ++utterances;
  }
  EXPECT_EQ(utterances, 6);
}

// --posteriors: Kaldi's Posterior text archive, a frame for each frame of the alignment, each
// frame's weights summing to 1, and the aligned transition-id among them.
TEST(AlignCliTest, WritesForwardBackwardPosteriors) {
  TempDir dir;
  const std::string post = dir.file("post.txt"), ali = dir.file("ali.txt"), log = dir.file("log");
  const std::string cmd =
      Align(std::string(kOptions) + "--posteriors=ark,t:" + post + " " +
                DataPath("kaldi-mono/final.mdl") + " ark:" + DataPath("kaldi-mono/graphs.fsts") +
                " ark:" + DataPath("kaldi-mono/feats.ark") + " ark,t:" + ali,
            log);
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << ReadFile(log);
  const std::map<std::string, std::vector<int32_t>> alignments = ParseInt32Archive(ReadFile(ali));
  std::istringstream lines(ReadFile(post));
  std::string line;
  int32_t utterances = 0;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string key, word;
    words >> key;
    const std::vector<int32_t>& tids = alignments.at(key);
    size_t frame = 0;
    double sum = 0.0;
    bool aligned_seen = false;
    while (words >> word) {
      if (word == "[") {
        sum = 0.0;
        aligned_seen = false;
        continue;
      }
      if (word == "]") {
        EXPECT_NEAR(sum, 1.0, 1e-4) << key << ", frame " << frame;
        EXPECT_TRUE(aligned_seen) << key << ", frame " << frame;
        ++frame;
        continue;
      }
      const int32_t tid = std::stoi(word);
      std::string weight;
      words >> weight;
      sum += std::stod(weight);
      aligned_seen = aligned_seen || tid == tids[frame];
    }
    EXPECT_EQ(frame, tids.size()) << key;
    ++utterances;
  }
  EXPECT_EQ(utterances, 6);
}

TEST(AlignCliTest, TakesPipedSpecifiersAsKaldiRecipesPassThem) {
  TempDir dir;
  const std::string ali = dir.file("ali.txt"), scores = dir.file("scores.txt"),
                    log = dir.file("log");
  const std::string cmd =
      Align(std::string(kOptions) + DataPath("kaldi-mono/final.mdl") + " 'ark:cat " +
                DataPath("kaldi-mono/graphs.fsts") + " |' 'ark,s,cs:cat " +
                DataPath("kaldi-mono/feats.ark") + " |' 'ark,t:|cat >" + ali + "' ark,t:" + scores,
            log);
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << ReadFile(log);
  ExpectKaldiOutputs(ali, scores);
}

TEST(AlignCliTest, CountsUtterancesWithoutFeaturesAndFailsWhenNoneAligned) {
  TempDir dir;
  const std::string log = dir.file("log");
  // An empty feature archive: no graph has features.
  const std::string cmd = Align(std::string(kOptions) + DataPath("kaldi-mono/final.mdl") +
                                    " ark:" + DataPath("kaldi-mono/graphs.fsts") +
                                    " ark:/dev/null ark,t:" + dir.file("ali.txt"),
                                log);
  const int status = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 1) << "Kaldi's exit status when nothing aligned";
  const std::string messages = ReadFile(log);
  EXPECT_NE(messages.find("No features for utterance cards-001"), std::string::npos) << messages;
  EXPECT_NE(messages.find("Done 0, errors on 6"), std::string::npos) << messages;
}

TEST(AlignCliTest, RefusesBeamsThatDoNotMakeSenseAndWrongArgumentCounts) {
  TempDir dir;
  const std::string log = dir.file("log");
  const std::string beams = Align(" --beam=40 --retry-beam=10 " + DataPath("kaldi-mono/final.mdl") +
                                      " ark:" + DataPath("kaldi-mono/graphs.fsts") +
                                      " ark:" + DataPath("kaldi-mono/feats.ark") + " ark:/dev/null",
                                  log);
  EXPECT_NE(WEXITSTATUS(std::system(beams.c_str())), 0);
  EXPECT_NE(ReadFile(log).find("beams do not make sense"), std::string::npos) << ReadFile(log);
  EXPECT_EQ(WEXITSTATUS(std::system(Align(" a b c", log).c_str())), 1);
}

// compile-graphs: graphs from the phone sequences of Kaldi's alignments (silence taken out, and
// made optional between phones) give Kaldi's alignments back: the same transition-ids (Kaldi's
// reordered self-loops) where the silences fell between words, and the same phones on more than
// 99% of the frames of each utterance.
TEST(AlignCliTest, CompiledPhoneGraphsAlignAsKaldisGraphs) {
  TempDir dir;
  const std::string log = dir.file("log");
  std::map<int32_t, std::string> names;
  {
    std::istringstream in(ReadFile(DataPath("kaldi-mono/phones.txt")));
    std::string name;
    int32_t id = 0;
    while (in >> name >> id) names[id] = name;
  }
  const auto phones = ParseInt32Archive(ReadFile(DataPath("kaldi-mono/phone_ali.txt")));
  std::string transcripts;
  for (const auto& [key, frames] : phones) {
    transcripts += key;
    for (size_t t = 0; t < frames.size(); ++t) {
      if (frames[t] != 1 && (t == 0 || frames[t] != frames[t - 1])) {
        transcripts += " " + names.at(frames[t]);
      }
    }
    transcripts += "\n";
  }
  WriteFile(dir.file("text"), transcripts);
  const std::string compile = std::string(GMMSCORE_CLI) + " compile-graphs --phone-symbols=" +
                              DataPath("kaldi-mono/phones.txt") + " --optional-silence=SIL " +
                              DataPath("kaldi-mono/final.mdl") + " ark,t:" + dir.file("text");
  ASSERT_EQ(std::system((compile + " ark:" + dir.file("g.fsts") + " 2>" + log).c_str()), 0)
      << ReadFile(log);
  EXPECT_NE(ReadFile(log).find("succeeded for 6 graphs, failed for 0"), std::string::npos);
  // The text form reads back as the same graphs.
  ASSERT_EQ(std::system((compile + " ark,t:" + dir.file("g.txt") + " 2>" + log).c_str()), 0);
  const std::string ali = dir.file("ali"), ali_text = dir.file("ali2");
  for (const auto& [graphs, out] : {std::pair{"ark:" + dir.file("g.fsts"), ali},
                                    std::pair{"ark:" + dir.file("g.txt"), ali_text}}) {
    const std::string cmd =
        Align(std::string(kOptions) + DataPath("kaldi-mono/final.mdl") + " " + graphs +
                  " ark:" + DataPath("kaldi-mono/feats.ark") + " ark,t:" + out,
              log);
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << ReadFile(log);
  }
  EXPECT_EQ(ReadFile(ali), ReadFile(ali_text));
  const auto ours = ParseInt32Archive(ReadFile(ali));
  const auto kaldi = ParseInt32Archive(ReadFile(DataPath("kaldi-mono/ali.txt")));
  auto model = LoadModel(DataPath("kaldi-mono/final.mdl"));
  ASSERT_TRUE(model.ok());
  int identical = 0;
  for (const auto& [key, tids] : kaldi) {
    ASSERT_EQ(ours.at(key).size(), tids.size()) << key;
    identical += ours.at(key) == tids;
    size_t same = 0;
    for (size_t t = 0; t < tids.size(); ++t) {
      same += model->model.hmm().TransitionIdToPhone(ours.at(key)[t]) == phones.at(key)[t];
    }
    EXPECT_GT(double(same) / double(tids.size()), 0.99) << key;
  }
  EXPECT_GE(identical, 4);
  // Phones the symbols or the topology do not have fail their utterance alone.
  WriteFile(dir.file("bad"), "u1 d eh zz\nu2 99\nu3 d eh\n");
  ASSERT_EQ(std::system((std::string(GMMSCORE_CLI) + " compile-graphs " +
                         DataPath("kaldi-mono/final.mdl") + " ark,t:" + dir.file("bad") +
                         " ark:" + dir.file("b.fsts") + " 2>" + log)
                            .c_str()),
            256);  // all failed: exit status 1
  const std::string messages = ReadFile(log);
  EXPECT_NE(messages.find("utterance u1: 'd' is not a phone id"), std::string::npos) << messages;
  EXPECT_NE(messages.find("utterance u2: phone 99 is not in the topology"), std::string::npos)
      << messages;
}

// compile-graphs --lexicon: Kaldi's lexicon (lang/lexicon.txt) and the utterances' words give
// graphs that align to Kaldi's ali.txt byte for byte (silence optional between words, as Kaldi's
// lexicon FST has it); a word missing from the lexicon fails its utterance alone; a malformed
// lexicon fails with its file and line.
TEST(AlignCliTest, WordGraphsFromALexiconAlignAsKaldisGraphs) {
  TempDir dir;
  const std::string log = dir.file("log");
  const std::string compile = std::string(GMMSCORE_CLI) + " compile-graphs --phone-symbols=" +
                              DataPath("kaldi-mono/phones.txt") + " --optional-silence=SIL ";
  const std::string lexicon = "--lexicon=" + DataPath("kaldi-mono/lexicon.txt") + " ";
  ASSERT_EQ(std::system((compile + lexicon + DataPath("kaldi-mono/final.mdl") + " ark,t:" +
                         DataPath("kaldi-mono/text") + " ark:" + dir.file("g.fsts") + " 2>" + log)
                            .c_str()),
            0)
      << ReadFile(log);
  const std::string ali = dir.file("ali"), scores = dir.file("scores");
  const std::string cmd = Align(
      std::string(kOptions) + DataPath("kaldi-mono/final.mdl") + " ark:" + dir.file("g.fsts") +
          " ark:" + DataPath("kaldi-mono/feats.ark") + " ark,t:" + ali + " ark,t:" + scores,
      log);
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << ReadFile(log);
  ExpectKaldiOutputs(ali, scores);

  WriteFile(dir.file("text"), "u1 ten of spoons\nu2 ten of clubs\n");
  ASSERT_EQ(std::system((compile + lexicon + DataPath("kaldi-mono/final.mdl") +
                         " ark,t:" + dir.file("text") + " ark:" + dir.file("g2.fsts") + " 2>" + log)
                            .c_str()),
            0);
  EXPECT_NE(ReadFile(log).find("utterance u1: word 'spoons' is not in the lexicon"),
            std::string::npos)
      << ReadFile(log);
  EXPECT_NE(ReadFile(log).find("succeeded for 1 graphs, failed for 1"), std::string::npos);

  WriteFile(dir.file("lexicon"), "ten d eh n\nof ao zz\n");
  ASSERT_EQ(std::system((compile + "--lexicon=" + dir.file("lexicon") + " " +
                         DataPath("kaldi-mono/final.mdl") + " ark,t:" + dir.file("text") +
                         " ark:" + dir.file("g3.fsts") + " 2>" + log)
                            .c_str()),
            255 << 8);
  EXPECT_NE(ReadFile(log).find(dir.file("lexicon") + ": line 2: phone 'zz' is not in the symbol"),
            std::string::npos)
      << ReadFile(log);
}

}  // namespace
}  // namespace gmmscore::testing

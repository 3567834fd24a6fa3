// Kaldi's model, matrix and audio tools under their names (gmmscore kaldi-links), against what
// Kaldi made in tests/data/kaldi-mono and tests/data/kaldi-tri-wav: gmm-copy, copy-matrix and
// wav-to-duration byte for byte, gmm-compute-likes to float rounding, show-alignments in Kaldi's
// layout, gmm-mixup and extract-segments by Kaldi's rules; for each, a usage error (1), and inputs
// or outputs that cannot be opened: an ERROR naming them and 255, never a crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.h"
#include "tests/wave_test_util.h"

namespace gmmscore::testing {
namespace {

std::string Cli() { return std::string(GMMSCORE_CLI); }
std::string Mono(const std::string& name) { return DataPath("kaldi-mono/" + name); }

class KaldiModelToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(RunCommand(Cli() + " kaldi-links " + dir_.file("bin") + " >/dev/null", log()), 0)
        << ReadFile(log());
  }
  // The tool, quiet about its command line.
  std::string tool(const std::string& name) const {
    return dir_.file("bin/" + name) + " --print-args=false";
  }
  std::string file(const std::string& name) const { return dir_.file(name); }
  std::string log() const { return dir_.file("log"); }
  // Runs command; expects exit status `status` and, unless empty, `text` in its stderr.
  void Expect(const std::string& command, int status, const std::string& text = "") {
    EXPECT_EQ(RunCommand(command, log()), status) << command << "\n" << ReadFile(log());
    EXPECT_NE(ReadFile(log()).find(text), std::string::npos) << command << "\n" << ReadFile(log());
  }
  // Missing input and unopenable output: both errors naming the file, 255.
  void ExpectFileErrors(const std::string& missing_input, const std::string& bad_output) {
    Expect(missing_input, 255, "missing.in");
    Expect(missing_input, 255, "ERROR (");
    Expect(bad_output, 255, "no/such/folder/out");
  }
  std::string missing_in() const { return file("missing.in"); }
  std::string bad_out() const { return file("no/such/folder/out"); }

  TempDir dir_;
};

TEST_F(KaldiModelToolsTest, GmmCopyWritesKaldisBytes) {
  // Binary to binary and binary to text: Kaldi's own files (final.txt.mdl is Kaldi's
  // `gmm-copy --binary=false final.mdl`).
  Expect(tool("gmm-copy") + " " + Mono("final.mdl") + " " + file("copy.mdl"), 0,
         "LOG (gmm-copy) Written model to " + file("copy.mdl"));
  EXPECT_EQ(ReadFile(file("copy.mdl")), ReadFile(Mono("final.mdl")));
  Expect(tool("gmm-copy") + " --binary=false " + Mono("final.mdl") + " -", 0);
  Expect(tool("gmm-copy") + " --binary=false 'cat " + Mono("final.mdl") + " |' " +
             file("copy.txt.mdl"),
         0);
  EXPECT_EQ(ReadFile(file("copy.txt.mdl")), ReadFile(Mono("final.txt.mdl")));
  // Text in: Kaldi's text again, its 7 digits read and printed back, but for the gconsts, which
  // Kaldi computes anew from the parameters as read.
  Expect(tool("gmm-copy") + " --binary=false " + Mono("final.txt.mdl") + " " + file("again.mdl"),
         0);
  const auto without_gconsts = [](const std::string& text) {
    std::istringstream lines(text);
    std::string line, kept;
    while (std::getline(lines, line)) {
      if (line.rfind("<GCONSTS>", 0) != 0) kept += line + "\n";
    }
    return kept;
  };
  EXPECT_EQ(without_gconsts(ReadFile(file("again.mdl"))),
            without_gconsts(ReadFile(Mono("final.txt.mdl"))));
  // The transition model alone: the file's first part.
  Expect(tool("gmm-copy") + " --copy-am=false " + Mono("final.mdl") + " " + file("tm.mdl"), 0);
  const std::string model = ReadFile(Mono("final.mdl"));
  const std::string tm = ReadFile(file("tm.mdl"));
  EXPECT_EQ(tm, model.substr(0, model.find("<DIMENSION>")));
  // An AmDiagGmm is expected where the transition model is.
  Expect(tool("gmm-copy") + " --copy-tm=false " + Mono("final.mdl") + " " + file("am.mdl"), 255,
         "expected <DIMENSION>, found <TransitionModel>");

  Expect(tool("gmm-copy") + " " + Mono("final.mdl"), 1, "gmm-copy [options]");
  WriteFile(file("truncated.mdl"), model.substr(0, 3000));
  Expect(tool("gmm-copy") + " " + file("truncated.mdl") + " " + file("x.mdl"), 255,
         "truncated.mdl: byte ");
  ExpectFileErrors(tool("gmm-copy") + " " + missing_in() + " " + file("x.mdl"),
                   tool("gmm-copy") + " " + Mono("final.mdl") + " " + bad_out());
  Expect(tool("gmm-copy") + " " + Mono("final.mdl") + " /dev/full", 255);
}

// Kaldi's log-likelihoods (loglikes.ark, Kaldi's gmm-compute-likes of feats.ark) to float rounding.
TEST_F(KaldiModelToolsTest, GmmComputeLikesGivesKaldisScores) {
  Expect(tool("gmm-compute-likes") + " " + Mono("final.mdl") + " ark:" + Mono("feats.ark") +
             " ark:" + file("loglikes.ark"),
         0, "LOG (gmm-compute-likes) gmm-compute-likes: computed likelihoods for 6 utterances.");
  const std::map<std::string, Matrix> ours = ReadTable("ark:" + file("loglikes.ark"));
  const std::map<std::string, Matrix> kaldi = ReadTable("ark:" + Mono("loglikes.ark"));
  ASSERT_EQ(ours.size(), 6u);
  for (const auto& [key, expected] : kaldi) {
    ASSERT_TRUE(ours.count(key)) << key;
    const Matrix& got = ours.at(key);
    ASSERT_EQ(got.rows, expected.rows) << key;
    ASSERT_EQ(got.cols, 56) << key;
    for (size_t i = 0; i < got.data.size(); ++i) {
      // Kaldi's float expanded form against ours: a few float roundings of scores near -100.
      ASSERT_NEAR(got.data[i], expected.data[i], 5e-6 * std::max(1.0f, std::abs(expected.data[i])))
          << key << " value " << i;
    }
  }
  // The same bytes as the binary matrix format holds them; text as Kaldi prints (7 digits).
  EXPECT_EQ(ReadFile(file("loglikes.ark")).size(), ReadFile(Mono("loglikes.ark")).size());
  Expect(tool("gmm-compute-likes") + " " + Mono("final.mdl") + " 'ark:sed \"/]/q\" " +
             Mono("feats.txt") + " |' ark,t:" + file("loglikes.txt"),
         0, "computed likelihoods for 1 utterances.");
  std::istringstream text(ReadFile(file("loglikes.txt")));
  std::string line;
  std::getline(text, line);
  EXPECT_EQ(line, "cards-001  [");
  std::getline(text, line);
  std::istringstream values(line);
  std::string value;
  values >> value;
  EXPECT_LE(value.size(), 9u) << value;  // "-123.4567": 7 significant digits
  EXPECT_EQ(ReadTable("ark:" + file("loglikes.txt")).at("cards-001").rows,
            kaldi.at("cards-001").rows);

  Expect(tool("gmm-compute-likes") + " " + Mono("final.mdl") + " ark:" + Mono("feats.ark"), 1,
         "gmm-compute-likes [options]");
  ExpectFileErrors(tool("gmm-compute-likes") + " " + missing_in() + " ark:" + Mono("feats.ark") +
                       " ark:/dev/null",
                   tool("gmm-compute-likes") + " " + Mono("final.mdl") +
                       " ark:" + Mono("feats.ark") + " ark:" + bad_out());
  Expect(tool("gmm-compute-likes") + " " + Mono("final.mdl") + " ark:" + missing_in() +
             " ark:/dev/null",
         255, "missing.in");
}

// Each utterance: its transition-ids cut into phones, the phones' names under them, each column as
// wide as the wider of the two; the cut is ali-to-phones's (Kaldi's phone_ali.txt).
TEST_F(KaldiModelToolsTest, ShowAlignmentsLaysOutPhones) {
  Expect(tool("show-alignments") + " " + Mono("phones.txt") + " " + Mono("final.mdl") +
             " ark:" + Mono("ali.txt") + " >" + file("shown"),
         0);
  const std::string shown = ReadFile(file("shown"));
  EXPECT_EQ(shown.rfind("cards-001  [ 2 6 5 12 10 10 10 10 10 10 18 17 17 17 17 17 17 ] [ 38 ", 0),
            0u);
  std::istringstream lines(shown);
  std::map<std::string, std::vector<int32_t>> ids;
  std::map<std::string, std::vector<std::string>> names;
  std::string ids_line, names_line, empty;
  while (std::getline(lines, ids_line)) {
    ASSERT_TRUE(std::getline(lines, names_line));
    ASSERT_TRUE(std::getline(lines, empty));
    EXPECT_EQ(empty, "");
    // A name starts where its bracket does.
    const std::string key = ids_line.substr(0, ids_line.find(' '));
    ASSERT_EQ(names_line.rfind(key + "  ", 0), 0u) << names_line;
    for (size_t at = key.size() + 2; at < ids_line.size(); at = ids_line.find("] ", at) + 2) {
      ASSERT_EQ(ids_line[at], '[') << ids_line;
      ASSERT_NE(names_line[at], ' ') << at << "\n" << ids_line << "\n" << names_line;
      names[key].push_back(names_line.substr(at, names_line.find(' ', at) - at));
    }
    std::istringstream words(ids_line.substr(key.size()));
    std::string word;
    while (words >> word) {
      if (word != "[" && word != "]") ids[key].push_back(std::stoi(word));
    }
  }
  // The transition-ids are Kaldi's alignment; the names, its phone sequence.
  EXPECT_EQ(ids, ParseInt32Archive(ReadFile(Mono("ali.txt"))));
  std::map<int32_t, std::string> phone_names;
  std::istringstream table(ReadFile(Mono("phones.txt")));
  std::string name;
  int32_t id = 0;
  while (table >> name >> id) phone_names[id] = name;
  ASSERT_EQ(RunCommand(tool("ali-to-phones") + " " + Mono("final.mdl") + " ark:" + Mono("ali.txt") +
                           " ark,t:" + file("phones"),
                       log()),
            0);
  for (const auto& [key, phones] : ParseInt32Archive(ReadFile(file("phones")))) {
    std::vector<std::string> sequence;
    for (const int32_t phone : phones) sequence.push_back(phone_names[phone]);
    EXPECT_EQ(names[key], sequence) << key;
  }

  WriteFile(file("bad-phones.txt"), "SIL 1 extra\n");
  Expect(tool("show-alignments") + " " + file("bad-phones.txt") + " " + Mono("final.mdl") +
             " ark:" + Mono("ali.txt"),
         255, "Error opening symbol table file " + file("bad-phones.txt"));
  WriteFile(file("bad.ali"), "u1 2 6 999\n");
  Expect(tool("show-alignments") + " " + Mono("phones.txt") + " " + Mono("final.mdl") +
             " ark:" + file("bad.ali"),
         255, "utterance u1, frame 2: transition-id 999");
  Expect(tool("show-alignments") + " " + Mono("phones.txt") + " " + Mono("final.mdl"), 1,
         "show-alignments [options]");
  Expect(tool("show-alignments") + " " + missing_in() + " " + Mono("final.mdl") +
             " ark:" + Mono("ali.txt"),
         255, "missing.in");
  Expect(tool("show-alignments") + " " + Mono("phones.txt") + " " + missing_in() +
             " ark:" + Mono("ali.txt"),
         255, "missing.in");
}

// Tables and single matrices, as Kaldi writes them: feats.txt is Kaldi's text form of feats.ark.
TEST_F(KaldiModelToolsTest, CopyMatrixCopiesAndTransforms) {
  Expect(tool("copy-matrix") + " ark:" + Mono("feats.ark") + " ark,t:" + file("feats.txt"), 0,
         "LOG (copy-matrix) Copied 6 matrices.");
  EXPECT_EQ(ReadFile(file("feats.txt")), ReadFile(Mono("feats.txt")));
  Expect(tool("copy-matrix") + " 'ark:cat " + Mono("feats.ark") + " |' ark:- >" + file("feats.ark"),
         0);
  EXPECT_EQ(ReadFile(file("feats.ark")), ReadFile(Mono("feats.ark")));
  // One matrix: a file to a file, binary or text.
  ASSERT_EQ(RunCommand(Cli() + " subset-feats --n=1 ark:" + Mono("feats.ark") +
                           " ark:- | tail -c +11 > " + file("one.mat"),
                       log()),
            0)
      << ReadFile(log());
  Expect(tool("copy-matrix") + " " + file("one.mat") + " " + file("copy.mat"), 0,
         "LOG (copy-matrix) Copied matrix to " + file("copy.mat"));
  EXPECT_EQ(ReadFile(file("copy.mat")), ReadFile(file("one.mat")));
  Expect(tool("copy-matrix") + " --binary=false " + file("one.mat") + " -  >" + file("one.txt"), 0);
  EXPECT_EQ(ReadFile(file("one.txt")),
            ReadFile(Mono("feats.txt"))
                .substr(std::string("cards-001 ").size(), ReadFile(file("one.txt")).size()));

  // The transforms, in Kaldi's order and float arithmetic.
  const Matrix feats = ReadTable("ark:" + Mono("feats.ark")).at("cards-001");
  const auto transformed = [&](const std::string& options) {
    EXPECT_EQ(RunCommand(tool("copy-matrix") + " " + options + " ark:" + Mono("feats.ark") +
                             " ark:" + file("out.ark"),
                         log()),
              0)
        << options << "\n"
        << ReadFile(log());
    return ReadTable("ark:" + file("out.ark")).at("cards-001");
  };
  const Matrix scaled = transformed("--scale=-2 --apply-power=2");
  const Matrix logged = transformed("--apply-log=true");
  const Matrix exped = transformed("--scale=0.5 --apply-exp");
  const Matrix softmax = transformed("--apply-softmax-per-row=true");
  for (size_t i = 0; i < feats.data.size(); ++i) {
    const float x = feats.data[i];
    EXPECT_EQ(scaled.data[i], (-2 * x) * (-2 * x)) << i;
    EXPECT_EQ(logged.data[i], std::log(std::max(x, 1e-20f))) << i;
    EXPECT_EQ(exped.data[i], std::exp(0.5f * x)) << i;
  }
  for (int32_t r = 0; r < softmax.rows; ++r) {
    double sum = 0;
    for (int32_t c = 0; c < softmax.cols; ++c) sum += softmax.at(r, c);
    EXPECT_NEAR(sum, 1.0, 1e-5) << r;
  }

  Expect(
      tool("copy-matrix") + " --apply-log --apply-exp ark:" + Mono("feats.ark") + " ark:/dev/null",
      255, "Only one of apply-log, apply-exp and apply-softmax-per-row can be given");
  Expect(tool("copy-matrix") + " ark:" + Mono("feats.ark") + " " + file("x"), 255,
         "Cannot mix archives with regular files (copying matrices)");
  Expect(tool("copy-matrix") + " ark:/dev/null ark:/dev/null", 1, "Copied 0 matrices.");
  Expect(tool("copy-matrix") + " ark:" + Mono("feats.ark"), 1, "copy-matrix [options]");
  ExpectFileErrors(tool("copy-matrix") + " ark:" + missing_in() + " ark:/dev/null",
                   tool("copy-matrix") + " ark:" + Mono("feats.ark") + " ark:" + bad_out());
  ExpectFileErrors(tool("copy-matrix") + " " + missing_in() + " " + file("x"),
                   tool("copy-matrix") + " " + file("one.mat") + " " + bad_out());
}

// Durations from the headers, or from the samples: Kaldi's utt2dur lines for the same files.
TEST_F(KaldiModelToolsTest, WavToDurationGivesKaldisDurations) {
  const std::string egbf2 = DataPath("kaldi-tri-wav/egbf2-030.wav");
  const std::string fslt = DataPath("kaldi-tri-wav/fslt-010.wav");
  // A file, and a pipe (its command's output read to the end).
  WriteFile(file("wav.scp"), "egbf2-030 " + egbf2 + "\nfslt-010 cat " + fslt + " |\n");
  const std::string kaldi = ReadFile(DataPath("kaldi-tri-wav/utt2dur"));
  for (const std::string option : {"", "--read-entire-file=true "}) {
    Expect(tool("wav-to-duration") + " " + option + "scp:" + file("wav.scp") +
               " ark,t:" + file("utt2dur"),
           0,
           "LOG (wav-to-duration) Printed duration for 2 audio files.\n"
           "LOG (wav-to-duration) Mean duration was 1.25181, min and max durations were "
           "1.24863, 1.255\n");
    EXPECT_EQ(ReadFile(file("utt2dur")), kaldi) << option;
  }
  // An archive of WAVE objects: each header's object skipped to the next.
  WriteFile(file("waves.ark"), "egbf2-030 " + ReadFile(egbf2) + "fslt-010 " + ReadFile(fslt));
  Expect(tool("wav-to-duration") + " ark:" + file("waves.ark") + " ark,t:" + file("utt2dur"), 0);
  EXPECT_EQ(ReadFile(file("utt2dur")), kaldi);

  // A header written to a pipe has no sizes: only the samples tell.
  std::string streamed = ReadFile(egbf2);
  streamed.replace(4, 4, std::string(4, '\0'));
  streamed.replace(40, 4, std::string(4, '\0'));
  WriteFile(file("streamed.wav"), streamed);
  WriteFile(file("streamed.scp"), "u " + file("streamed.wav") + "\n");
  Expect(tool("wav-to-duration") + " scp:" + file("streamed.scp") + " ark,t:-", 255,
         "Error: member u has no duration in header. Check the source, and/or try "
         "--read-entire-file.");
  Expect(tool("wav-to-duration") + " --read-entire-file=true scp:" + file("streamed.scp") +
             " ark,t:" + file("streamed.dur"),
         0);
  EXPECT_EQ(ReadFile(file("streamed.dur")), "u 1.248625 \n");

  WriteFile(file("bad.scp"), "u " + Mono("phones.txt") + "\n");
  Expect(tool("wav-to-duration") + " scp:" + file("bad.scp") + " ark:/dev/null", 255,
         "expected RIFF or RIFX");
  WriteFile(file("empty.scp"), "");
  Expect(tool("wav-to-duration") + " scp:" + file("empty.scp") + " ark:/dev/null", 1,
         "Printed duration for 0 audio files.");
  Expect(tool("wav-to-duration") + " scp:" + file("wav.scp"), 1, "wav-to-duration [options...]");
  ExpectFileErrors(tool("wav-to-duration") + " scp:" + missing_in() + " ark:/dev/null",
                   tool("wav-to-duration") + " scp:" + file("wav.scp") + " ark:" + bad_out());
}

// The pdfs of a text model: each <DiagGMM> ... </DiagGMM> block.
std::vector<std::string> PdfBlocks(const std::string& text) {
  std::vector<std::string> blocks;
  for (size_t at = text.find("<DiagGMM>"); at != std::string::npos;) {
    const size_t end = text.find("</DiagGMM>", at);
    blocks.push_back(text.substr(at, end - at));
    at = text.find("<DiagGMM>", end);
  }
  return blocks;
}

// Mixing up and down by occupancy, as gmm-est mixes; without a target, a copy.
TEST_F(KaldiModelToolsTest, GmmMixupSplitsAndMerges) {
  std::string occs = " [ ";
  for (int pdf = 0; pdf < 56; ++pdf) occs += std::to_string(100 * (pdf % 7 + 1)) + " ";
  WriteFile(file("occs"), occs + "]\n");
  Expect(tool("gmm-mixup") + " " + Mono("final.mdl") + " " + missing_in() + " " + file("same.mdl"),
         0, "LOG (gmm-mixup) Written model to " + file("same.mdl"));
  EXPECT_EQ(ReadFile(file("same.mdl")), ReadFile(Mono("final.mdl")));

  Expect(tool("gmm-mixup") + " --mix-up=900 --binary=false " + Mono("final.mdl") + " " +
             file("occs") + " " + file("up.mdl"),
         0,
         "LOG (gmm-mixup) Split 56 states with target = 900, power = 0.2, perturb_factor = 0.01 "
         "and min_count = 20, split #Gauss from 677 to ");
  // The pdfs that were not split are Kaldi's own bytes; the others have more Gaussians.
  const std::vector<std::string> kaldi = PdfBlocks(ReadFile(Mono("final.txt.mdl")));
  const std::vector<std::string> up = PdfBlocks(ReadFile(file("up.mdl")));
  ASSERT_EQ(up.size(), 56u);
  int unchanged = 0;
  for (size_t pdf = 0; pdf < up.size(); ++pdf) {
    const auto rows = [](const std::string& block) {
      return std::count(block.begin(), block.end(), '\n');
    };
    if (up[pdf] == kaldi[pdf]) {
      ++unchanged;
    } else {
      EXPECT_GT(rows(up[pdf]), rows(kaldi[pdf])) << pdf;
    }
  }
  EXPECT_GT(unchanged, 0);
  EXPECT_LT(unchanged, 56);
  Expect(tool("gmm-info") + " " + file("up.mdl") + " | grep -q 'number of gaussians 1062'", 0);

  Expect(tool("gmm-mixup") + " --mix-down=300 " + Mono("final.mdl") + " " + file("occs") + " " +
             file("down.mdl"),
         0,
         "LOG (gmm-mixup) Merged 56 states with target = 300, power = 0.2 and min_count = 20, "
         "merged from 677 to 273");

  WriteFile(file("short.occs"), " [ 1 2 ]\n");
  Expect(tool("gmm-mixup") + " --mix-up=900 " + Mono("final.mdl") + " " + file("short.occs") + " " +
             file("x.mdl"),
         255, "Dimension of state occupancies 2 does not match num-pdfs 56");
  Expect(tool("gmm-mixup") + " --mix-up=900 " + Mono("final.mdl") + " " + missing_in() + " " +
             file("x.mdl"),
         255, "missing.in");
  Expect(tool("gmm-mixup") + " " + Mono("final.mdl") + " " + file("occs"), 1,
         "gmm-mixup [options]");
  ExpectFileErrors(
      tool("gmm-mixup") + " " + missing_in() + " " + file("occs") + " " + file("x.mdl"),
      tool("gmm-mixup") + " " + Mono("final.mdl") + " " + file("occs") + " " + bad_out());
}

// Segments cut as Kaldi cuts them, written as Kaldi writes WAVE objects: a whole recording comes
// out as the file it came from; lines Kaldi skips are warnings in its words.
TEST_F(KaldiModelToolsTest, ExtractSegmentsCutsRecordings) {
  const std::string egbf2 = ReadFile(DataPath("kaldi-tri-wav/egbf2-030.wav"));
  const std::string fslt = ReadFile(DataPath("kaldi-tri-wav/fslt-010.wav"));
  WriteFile(file("wav.scp"), "a " + DataPath("kaldi-tri-wav/egbf2-030.wav") + "\nb cat " +
                                 DataPath("kaldi-tri-wav/fslt-010.wav") + " |\n");
  WriteFile(file("segments"),
            "whole-a a 0 -1\n"
            "s1 a 0 0.5\n"
            "whole-b b 0.0 1.7\n"  // past the end by less than --max-overshoot: cut there
            "s4 b 0.25 1.9\n"
            "bad line\n"
            "s5 c 0 1\n"
            "s6 a 0.2 0.25\n"
            "s7 a 0.2 0.5 1\n"
            "s8 a 1.3 1.5\n"
            "s9 a 0.5 0.2\n"
            "s10 a nan 0.2\n");
  Expect(
      tool("extract-segments") + " scp:" + file("wav.scp") + " " + file("segments") +
          " ark:" + file("segments.ark"),
      0,
      "WARNING (extract-segments) Segment end is too far out of file data range [0,1.255s]; "
      "skipping segment 's4 b 0.25 1.9'\n"
      "WARNING (extract-segments) Invalid line in segments file: bad line\n"
      "WARNING (extract-segments) Could not find recording c, skipping segment s5\n"
      "WARNING (extract-segments) Segment s6 too short, skipping it.\n"
      "WARNING (extract-segments) Invalid channel 1 >= 1. Skipping segment s7\n"
      "WARNING (extract-segments) Segment start is out of file data range [0, 1.24863s]; "
      "skipping segment 's8 a 1.3 1.5'\n"
      "WARNING (extract-segments) Invalid line in segments file [empty or invalid segment]: s9 "
      "a 0.5 0.2\n"
      "WARNING (extract-segments) Invalid line in segments file [bad start]: s10 a nan 0.2\n"
      "LOG (extract-segments) Successfully processed 3 lines out of 11 in the segments file. \n");
  // 0.5 s at 16 kHz: the first 8000 samples under a header for them.
  std::string s1 = egbf2.substr(0, 44) + egbf2.substr(44, 16000), riff_size, data_size;
  PutLe(&riff_size, 36 + 16000, 4);
  PutLe(&data_size, 16000, 4);
  s1.replace(4, 4, riff_size);
  s1.replace(40, 4, data_size);
  EXPECT_TRUE(ReadFile(file("segments.ark")) ==
              "whole-a " + egbf2 + "s1 " + s1 + "whole-b " + fslt);
  // An archive of recordings serves as well; a segments file from a pipe too.
  WriteFile(file("recordings.ark"), "a " + egbf2 + "b " + fslt);
  Expect(tool("extract-segments") + " ark:" + file("recordings.ark") + " 'head -3 " +
             file("segments") + " |' ark:" + file("from-archive.ark"),
         0, "Successfully processed 3 lines out of 3");
  EXPECT_TRUE(ReadFile(file("from-archive.ark")) == ReadFile(file("segments.ark")));

  // Two channels: the line must say which.
  const std::vector<float> left = {1, 2, 3, 4}, right = {-5, -6, -7, -8};
  WriteFile(file("stereo.wav"), WaveBytes({left, right}, 8));
  WriteFile(file("stereo.scp"), "st " + file("stereo.wav") + "\n");
  WriteFile(file("stereo.segments"), "right st 0.125 0.75 1\n");
  Expect(tool("extract-segments") + " --min-segment-length=0 scp:" + file("stereo.scp") + " " +
             file("stereo.segments") + " ark:" + file("right.ark"),
         0);
  // Samples 1 to 3 (0.125 x 8 + 0.5 and 0.75 x 8 + 0.5 truncated, the end cut to the recording's).
  EXPECT_EQ(ReadFile(file("right.ark")), "right " + WaveBytes({{-6, -7, -8}}, 8));
  WriteFile(file("stereo.segments"), "any st 0.25 0.75\n");
  Expect(tool("extract-segments") + " --min-segment-length=0 scp:" + file("stereo.scp") + " " +
             file("stereo.segments") + " ark:/dev/null",
         255,
         "Your data has multiple channels. You must specify the channel in the segments file.");

  Expect(tool("extract-segments") + " scp:" + file("wav.scp") + " " + file("segments") +
             " ark,t:/dev/null",
         255, "Wave data can only be written in binary mode.");
  Expect(tool("extract-segments") + " scp:" + file("wav.scp") + " " + file("segments"), 1,
         "extract-segments [options]");
  ExpectFileErrors(
      tool("extract-segments") + " scp:" + missing_in() + " " + file("segments") + " ark:/dev/null",
      tool("extract-segments") + " scp:" + file("wav.scp") + " " + file("segments") +
          " ark:" + bad_out());
  Expect(
      tool("extract-segments") + " scp:" + file("wav.scp") + " " + missing_in() + " ark:/dev/null",
      255, "missing.in");
}

}  // namespace
}  // namespace gmmscore::testing

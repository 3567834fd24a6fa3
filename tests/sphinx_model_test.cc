// Sphinx continuous models: the real an4_ci_cont model from pocketsphinx-testdata, round trips,
// byte-swapped files, a small triphone model, rejected model types and malformed files (each a
// copy of an4 with one defect, made in a temporary directory).
#include "formats/sphinx_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

namespace gmmscore {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kAn4[] = "/usr/share/pocketsphinx/test/data/an4_ci_cont";
constexpr char kEnUs[] = "/usr/share/pocketsphinx/model/en-us/en-us";
constexpr const char* kFiles[] = {"means", "variances", "mixture_weights", "transition_matrices",
                                  "mdef"};

std::string ReadBytes(const std::string& path) {
  std::ifstream is(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(is), std::istreambuf_iterator<char>()};
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

uint32_t Bits(float v) { return std::bit_cast<uint32_t>(v); }

// An s3 file as the text header through "endhdr\n" and the 4-byte words between the byte-order
// magic and the checksum (little-endian files only).
struct S3Words {
  std::string header;
  std::vector<uint32_t> words;
};

S3Words ReadS3Words(const std::string& path) {
  const std::string bytes = ReadBytes(path);
  const size_t end = bytes.find("endhdr\n") + 7;
  S3Words f{bytes.substr(0, end), {}};
  for (size_t i = end + 4; i + 8 <= bytes.size(); i += 4) {
    uint32_t w = 0;
    for (int b = 3; b >= 0; --b) w = (w << 8) | static_cast<unsigned char>(bytes[i + b]);
    f.words.push_back(w);
  }
  return f;
}

// Writes the words with the byte-order magic and sphinxbase's checksum, in either byte order.
void WriteS3Words(const std::string& path, const S3Words& f, bool big_endian = false) {
  std::string out = f.header;
  const auto put = [&](uint32_t w) {
    for (int b = 0; b < 4; ++b) {
      out.push_back(static_cast<char>(w >> (8 * (big_endian ? 3 - b : b))));
    }
  };
  put(0x11223344);
  uint32_t checksum = 0;
  for (uint32_t w : f.words) {
    put(w);
    checksum = ((checksum << 20) | (checksum >> 12)) + w;
  }
  put(checksum);
  WriteBytes(path, out);
}

S3Words NewS3(std::vector<uint32_t> words) {
  return {"s3\nversion 1.0\nchksum0 yes\nendhdr\n", std::move(words)};
}

void ExpectSameModel(const GmmModel& a, const GmmModel& b) {
  EXPECT_EQ(a.dim(), b.dim());
  EXPECT_EQ(a.spec().gauss_begin, b.spec().gauss_begin);
  EXPECT_EQ(a.spec().weights, b.spec().weights);
  EXPECT_EQ(a.spec().means, b.spec().means);
  EXPECT_EQ(a.spec().variances, b.spec().variances);
  EXPECT_EQ(a.state_names(), b.state_names());
  EXPECT_TRUE(a.hmm() == b.hmm());
}

// A fresh directory per test; SphinxModelTest fills it with a copy of an4_ci_cont.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "sphinx_model_test_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  std::string ReadError() const {
    auto model = ReadSphinxModel(dir_);
    EXPECT_FALSE(model.ok());
    return std::string(model.status().message());
  }

  std::string dir_;
};

class SphinxModelTest : public TempDirTest {
 protected:
  void SetUp() override {
    if (!fs::exists(kAn4)) GTEST_SKIP() << kAn4 << " is missing (package pocketsphinx-testdata)";
    TempDirTest::SetUp();
    for (const char* name : kFiles) fs::copy_file(std::string(kAn4) + "/" + name, Path(name));
  }
  void SetWord(const char* file, size_t index, uint32_t value) {
    S3Words f = ReadS3Words(Path(file));
    f.words[index] = value;
    WriteS3Words(Path(file), f);
  }
  void ReplaceInMdef(const std::string& from, const std::string& to) {
    std::string text = ReadBytes(Path("mdef"));
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos);
    WriteBytes(Path("mdef"), text.replace(at, from.size(), to));
  }
  // Rewrites means and variances with `n_mgau` codebooks of the given streams' lengths.
  void SetCodebooks(uint32_t n_mgau, const std::vector<uint32_t>& veclens) {
    for (const char* file : {"means", "variances"}) {
      const S3Words f = ReadS3Words(Path(file));
      uint32_t values = 0;
      for (uint32_t v : veclens) values += n_mgau * v;
      std::vector<uint32_t> words = {n_mgau, uint32_t(veclens.size()), 1};
      words.insert(words.end(), veclens.begin(), veclens.end());
      words.push_back(values);
      words.insert(words.end(), f.words.begin() + 5, f.words.begin() + 5 + values);
      WriteS3Words(Path(file), {f.header, words});
    }
  }
};

TEST_F(SphinxModelTest, ReadsAn4) {
  auto model = ReadSphinxModel(dir_);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->source_format(), "sphinx");
  EXPECT_EQ(model->num_states(), 102);  // 34 CI phones x 3 emitting states
  EXPECT_EQ(model->num_gauss(), 102);
  EXPECT_EQ(model->min_gauss_per_state(), 1);
  EXPECT_EQ(model->max_gauss_per_state(), 1);
  EXPECT_EQ(model->dim(), 39);  // 1s_c_d_dd
  for (int32_t s = 0; s < model->num_states(); ++s) {
    double sum = 0.0;
    for (uint32_t g = model->gauss_begin(s); g < model->gauss_end(s); ++g) sum += model->weight(g);
    EXPECT_NEAR(sum, 1.0, 1e-6) << "state " << s;
  }
  EXPECT_FLOAT_EQ(model->mean(0)[0], -1.0690821f);
  EXPECT_FLOAT_EQ(model->mean(0)[2], 0.024705388f);
  EXPECT_FLOAT_EQ(model->variance(0)[0], 7.8162088f);
  EXPECT_FLOAT_EQ(model->variance(0)[1], 0.41935608f);
  EXPECT_EQ(model->state_names()[0], "AA_0");
  EXPECT_EQ(model->state_names()[80], "SIL_2");
  EXPECT_EQ(model->state_names()[101], "Z_2");
}

TEST_F(SphinxModelTest, An4Hmm) {
  auto model = ReadSphinxModel(dir_);
  ASSERT_TRUE(model.ok()) << model.status();
  const TransitionModel& hmm = model->hmm();
  EXPECT_EQ(hmm.NumPhones(), 34);
  EXPECT_EQ(hmm.NumPdfs(), 102);
  EXPECT_EQ(hmm.NumTransitionStates(), 102);
  EXPECT_EQ(hmm.NumTransitionIds(), 204);  // a self-loop and a forward arc per state
  EXPECT_EQ(hmm.topology().entries.size(), 34u);
  const auto& aa = hmm.topology().TopologyForPhone(1);
  ASSERT_EQ(aa.size(), 4u);
  EXPECT_TRUE(aa[3].transitions.empty());
  ASSERT_EQ(aa[0].transitions.size(), 2u);
  // Matrix 0, row 0 holds the counts 1443.7395 and 261 (sum 1704.7395).
  EXPECT_EQ(aa[0].transitions[0].first, 0);
  EXPECT_FLOAT_EQ(aa[0].transitions[0].second, 1443.7395f / 1704.7395f);
  EXPECT_EQ(aa[0].transitions[1].first, 1);
  EXPECT_NEAR(hmm.TransitionIdToLogProb(1), std::log(1443.7395 / 1704.7395), 1e-6);
  EXPECT_TRUE(hmm.IsSelfLoop(1));
  // SIL is the 27th phone: senones 78, 79, 80.
  EXPECT_EQ(hmm.TransitionIdToPhone(2 * 80 + 1), 27);
  EXPECT_EQ(hmm.TransitionIdToPdf(2 * 80 + 1), 80);
  EXPECT_EQ(hmm.TransitionIdToHmmState(2 * 80 + 2), 2);
}

TEST_F(SphinxModelTest, RoundTrip) {
  auto model = ReadSphinxModel(dir_);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(WriteSphinxModel(*model, Path("out")).ok());
  auto again = ReadSphinxModel(Path("out"));
  ASSERT_TRUE(again.ok()) << again.status();
  ExpectSameModel(*model, *again);
  // Means and variances come back bit for bit, checksum included; the counts in
  // mixture_weights and transition_matrices come back normalised.
  for (const char* file : {"means", "variances"}) {
    EXPECT_EQ(ReadS3Words(Path(std::string("out/") + file)).words, ReadS3Words(Path(file)).words);
  }
  // A second write of what was read back gives the same files.
  ASSERT_TRUE(WriteSphinxModel(*again, Path("out2")).ok());
  for (const char* file : kFiles) {
    EXPECT_EQ(ReadBytes(Path(std::string("out/") + file)),
              ReadBytes(Path(std::string("out2/") + file)))
        << file;
  }
  EXPECT_THAT(ReadBytes(Path("out/mdef")), HasSubstr("SIL - - - filler 26 78 79 80 N"));
}

TEST_F(SphinxModelTest, ReadsBigEndianFiles) {
  auto little = ReadSphinxModel(dir_);
  ASSERT_TRUE(little.ok()) << little.status();
  for (const char* file : {"means", "variances", "mixture_weights", "transition_matrices"}) {
    WriteS3Words(Path(file), ReadS3Words(Path(file)), /*big_endian=*/true);
  }
  auto big = ReadSphinxModel(dir_);
  ASSERT_TRUE(big.ok()) << big.status();
  ExpectSameModel(*little, *big);
}

TEST_F(SphinxModelTest, TruncatedMeans) {
  fs::resize_file(Path("means"), 1000);
  EXPECT_THAT(ReadError(),
              AllOf(HasSubstr(Path("means") + ": byte 64: truncated"), HasSubstr("15912 bytes")));
}

TEST_F(SphinxModelTest, BadByteOrderMagic) {
  std::string bytes = ReadBytes(Path("means"));
  bytes.replace(40, 4, "XXXX");
  WriteBytes(Path("means"), bytes);
  EXPECT_THAT(ReadError(), HasSubstr(Path("means") + ": byte 40: bad byte-order magic"));
}

TEST_F(SphinxModelTest, FlippedChecksumByte) {
  std::string bytes = ReadBytes(Path("variances"));
  bytes.back() = static_cast<char>(bytes.back() ^ 0x40);
  WriteBytes(Path("variances"), bytes);
  EXPECT_THAT(ReadError(), AllOf(HasSubstr(Path("variances") + ": byte 15976: checksum"),
                                 HasSubstr("does not match")));
}

TEST_F(SphinxModelTest, NanVariance) {
  SetWord("variances", 5 + 5, Bits(std::numeric_limits<float>::quiet_NaN()));  // 5 header words
  EXPECT_THAT(ReadError(), AllOf(HasSubstr(Path("variances") + ": byte 84:"),
                                 HasSubstr("codebook 0, density 0, dimension 5: variance nan")));
}

TEST_F(SphinxModelTest, ZeroVariance) {
  SetWord("variances", 5 + 7 * 39 + 3, Bits(0.0f));
  EXPECT_THAT(ReadError(), AllOf(HasSubstr(Path("variances") + ": byte 1168:"),
                                 HasSubstr("codebook 7, density 0, dimension 3: variance 0")));
}

TEST_F(SphinxModelTest, NegativeMixtureWeight) {
  SetWord("mixture_weights", 4 + 7, Bits(-1.0f));  // 4 header words
  EXPECT_THAT(ReadError(), AllOf(HasSubstr(Path("mixture_weights") + ": byte 88:"),
                                 HasSubstr("senone 7, density 0: mixture weight -1 is negative")));
}

TEST_F(SphinxModelTest, MdefSenoneOutOfRange) {
  ReplaceInMdef("3    4    5    N", "3    4  102    N");
  EXPECT_THAT(ReadError(), AllOf(HasSubstr(Path("mdef") + ": line 13:"),
                                 HasSubstr("senone 102 is not a state of the model")));
}

TEST_F(SphinxModelTest, MdefMatrixOutOfRange) {
  ReplaceInMdef("n/a    1    3", "n/a   34    3");
  EXPECT_THAT(ReadError(), AllOf(HasSubstr(Path("mdef") + ": line 13:"),
                                 HasSubstr("transition matrix 34 is out of range")));
}

TEST_F(SphinxModelTest, MdefBadRow) {
  ReplaceInMdef("3    4    5    N", "3    4    N");
  EXPECT_THAT(ReadError(), AllOf(HasSubstr(Path("mdef") + ": line 13:"), HasSubstr("10 fields")));
}

TEST_F(SphinxModelTest, RejectsPhoneticallyTiedMixtures) {
  SetCodebooks(34, {39});
  auto model = ReadSphinxModel(dir_);
  EXPECT_EQ(model.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(model.status().message(),
              AllOf(HasSubstr(Path("means")),
                    HasSubstr("phonetically tied mixtures (34 codebooks shared by 102 senones)")));
}

TEST_F(SphinxModelTest, RejectsSemiContinuous) {
  SetCodebooks(1, {39});
  auto model = ReadSphinxModel(dir_);
  EXPECT_EQ(model.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(model.status().message(),
              AllOf(HasSubstr(Path("means")),
                    HasSubstr("semi-continuous model (1 codebook shared by 102 senones)")));
}

TEST_F(SphinxModelTest, RejectsFeatureStreams) {
  SetCodebooks(102, {13, 13, 13});
  auto model = ReadSphinxModel(dir_);
  EXPECT_EQ(model.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(model.status().message(),
              AllOf(HasSubstr(Path("means")), HasSubstr("3 feature streams")));
}

TEST(SphinxModelEnUs, RejectsThePtmModel) {
  if (!fs::exists(kEnUs)) GTEST_SKIP() << kEnUs << " is missing (package pocketsphinx-en-us)";
  auto model = ReadSphinxModel(kEnUs);
  EXPECT_EQ(model.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(model.status().message(),
              AllOf(HasSubstr(std::string(kEnUs) + "/means"), HasSubstr("3 feature streams")));
}

// Two base phones and two triphones, 3 emitting states, 11 senones of 2 Gaussians in 2
// dimensions; the triphones share senone 6.
class TriphoneModelTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    std::vector<uint32_t> means = {11, 1, 2, 2, 44}, variances = means;
    std::vector<uint32_t> weights = {11, 1, 2, 22};
    for (uint32_t i = 0; i < 44; ++i) {
      means.push_back(Bits(0.5f * float(i) - 3.0f));
      variances.push_back(Bits(1.0f + 0.125f * float(i)));
    }
    for (uint32_t i = 0; i < 11; ++i) weights.insert(weights.end(), {Bits(1.0f), Bits(3.0f)});
    std::vector<uint32_t> tmats = {2, 3, 4, 24};
    for (int t = 0; t < 2; ++t) {
      for (float p : {0.5f, 0.5f, 0.0f, 0.0f, 0.0f, 0.75f, 0.25f, 0.0f, 0.0f, 0.0f, 0.5f, 0.5f}) {
        tmats.push_back(Bits(t == 0 ? p : 0.5f * p));  // matrix 1 in unnormalised counts
      }
    }
    WriteS3Words(Path("means"), NewS3(means));
    WriteS3Words(Path("variances"), NewS3(variances));
    WriteS3Words(Path("mixture_weights"), NewS3(weights));
    WriteS3Words(Path("transition_matrices"), NewS3(tmats));
    WriteBytes(Path("mdef"),
               "0.3\n2 n_base\n2 n_tri\n16 n_state_map\n11 n_tied_state\n6 n_tied_ci_state\n"
               "2 n_tied_tmat\n#\n"
               "SIL - - - filler 0 0 1 2 N\n"
               "A - - - n/a 1 3 4 5 N\n"
               "A SIL SIL s n/a 1 6 7 8 N\n"
               "A A SIL b n/a 1 6 9 10 N\n");
  }
};

TEST_F(TriphoneModelTest, Reads) {
  auto model = ReadSphinxModel(dir_);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->num_states(), 11);
  EXPECT_EQ(model->num_gauss(), 22);
  EXPECT_EQ(model->dim(), 2);
  EXPECT_EQ(model->weight(0), 0.25f);
  EXPECT_EQ(model->weight(1), 0.75f);
  EXPECT_EQ(model->mean(1)[1], -1.5f);
  EXPECT_EQ(model->state_names()[2], "SIL_2");
  EXPECT_EQ(model->state_names()[6], "A(SIL,SIL,s)_state0");
  EXPECT_EQ(model->state_names()[9], "A(A,SIL,b)_state1");
  const TransitionModel& hmm = model->hmm();
  EXPECT_EQ(hmm.NumPhones(), 4);
  EXPECT_EQ(hmm.NumTransitionStates(), 12);
  EXPECT_EQ(hmm.topology().TopologyForPhone(4)[1].transitions,
            (std::vector<std::pair<int32_t, float>>{{1, 0.75f}, {2, 0.25f}}));
  // Phone 4 (A(A,SIL,b)) starts at transition-state 10; its first state is senone 6.
  EXPECT_EQ(hmm.tuples()[9], (TransitionTuple{4, 0, 6, 6}));
}

TEST_F(TriphoneModelTest, RoundTrip) {
  auto model = ReadSphinxModel(dir_);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(WriteSphinxModel(*model, Path("out")).ok());
  auto again = ReadSphinxModel(Path("out"));
  ASSERT_TRUE(again.ok()) << again.status();
  ExpectSameModel(*model, *again);
  EXPECT_THAT(ReadBytes(Path("out/mdef")),
              AllOf(HasSubstr("6 n_tied_ci_state"), HasSubstr("A A SIL b n/a 1 6 9 10 N")));
}

TEST_F(TempDirTest, WritesModelsWithoutHmm) {
  GmmModelSpec spec;
  spec.dim = 2;
  spec.gauss_begin = {0, 1, 3};  // 1 and 2 Gaussians
  spec.weights = {1.0f, 0.25f, 0.75f};
  spec.means = {1, 2, 3, 4, 5, 6};
  spec.variances = {1, 1, 2, 2, 3, 3};
  auto model = GmmModel::Create(spec);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(WriteSphinxModel(*model, dir_).ok());
  auto again = ReadSphinxModel(dir_);
  ASSERT_TRUE(again.ok()) << again.status();
  // State 0 is padded with a weight-0 copy of its Gaussian; state 1 is unchanged.
  EXPECT_EQ(again->spec().gauss_begin, (std::vector<uint32_t>{0, 2, 4}));
  EXPECT_EQ(again->spec().weights, (std::vector<float>{1.0f, 0.0f, 0.25f, 0.75f}));
  EXPECT_EQ(again->spec().means, (std::vector<float>{1, 2, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(again->spec().variances, (std::vector<float>{1, 1, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(again->state_names(), (std::vector<std::string>{"STATE0_0", "STATE1_0"}));
  EXPECT_EQ(again->hmm().NumPhones(), 2);
  EXPECT_EQ(again->hmm().NumPdfs(), 2);
}

TEST_F(TempDirTest, UniformModelWithoutHmmRoundTrips) {
  GmmModelSpec spec;
  spec.dim = 3;
  spec.gauss_begin = {0, 2, 4, 6};
  spec.weights = {0.3f, 0.7f, 0.1f, 0.9f, 0.0f, 1.0f};
  for (int i = 0; i < 18; ++i) {
    spec.means.push_back(std::sin(float(i)));
    spec.variances.push_back(0.1f + std::cos(float(i)) * std::cos(float(i)));
  }
  auto model = GmmModel::Create(spec);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(WriteSphinxModel(*model, dir_).ok());
  auto again = ReadSphinxModel(dir_);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->spec().gauss_begin, spec.gauss_begin);
  EXPECT_EQ(again->spec().weights, spec.weights);
  EXPECT_EQ(again->spec().means, spec.means);
  EXPECT_EQ(again->spec().variances, spec.variances);
}

}  // namespace
}  // namespace gmmscore

// HTK MMF reader and writer: a hand-written MMF checked value by value, round trips, and one test
// per kind of malformed input.
#include "formats/htk_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "formats/kaldi_model.h"
#include "tests/test_util.h"

namespace gmmscore {
namespace {

// Two HMMs sharing the ~s state "mid" (whose mixture 2, of weight 0, is left out), a ~v variance
// macro, a ~t transP macro with an entry-to-exit skip, an unused variance floor, a single-Gaussian
// state without <NUMMIXES>, and keywords in lower and mixed case.
constexpr char kMmf[] = R"(~o
<STREAMINFO> 1 2
<VECSIZE> 2<NULLD><MFCC_D_A_Z><DIAGC>
~v "varFloor1"
<VARIANCE> 2
 1.0e-02 1.0e-02
~v "wide"
<VARIANCE> 2
 2.0e+00 5.0e-01
~t "skip4"
<TRANSP> 4
 0.0 0.9 0.0 0.1
 0.0 0.6 0.4 0.0
 0.0 0.0 0.8 0.2
 0.0 0.0 0.0 0.0
~s "mid"
<NUMMIXES> 3
<MIXTURE> 1 2.5e-01
<MEAN> 2
 0.0 1.0
~v "wide"
<GCONST> 9.9
<MIXTURE> 3 7.5e-01
<MEAN> 2
 -1.0 0.5
<VARIANCE> 2
 1.0 4.0
~h "a"
<BEGINHMM>
<NUMSTATES> 4
<STATE> 2
<MEAN> 2
 1.5 -2.0
<VARIANCE> 2
 0.25 1.0
<STATE> 3
~s "mid"
<TRANSP> 4
 0 1 0 0
 0 0.5 0.5 0
 0 0 0.7 0.3
 0 0 0 0
<ENDHMM>
~h "b"
<beginhmm>
<numstates> 4
<state> 2
~s "mid"
<State> 3
<NumMixes> 2
<Mixture> 1 0.4
<Mean> 2
 0 0
~v "wide"
<Mixture> 2 0.6
<Mean> 2
 1 1
<Variance> 2
 1 1
~t "skip4"
<endhmm>
)";

GmmModel Read(const std::string& text) {
  std::istringstream is(text);
  auto model = ReadHtkModel(is, "test.mmf");
  EXPECT_TRUE(model.ok()) << model.status();
  return *std::move(model);
}

std::string Write(const GmmModel& model) {
  std::ostringstream os;
  EXPECT_TRUE(WriteHtkModel(model, os).ok());
  return os.str();
}

void ExpectSameGmms(const GmmModel& a, const GmmModel& b) {
  EXPECT_EQ(a.dim(), b.dim());
  EXPECT_EQ(a.spec().gauss_begin, b.spec().gauss_begin);
  EXPECT_EQ(a.spec().weights, b.spec().weights);
  EXPECT_EQ(a.spec().means, b.spec().means);
  EXPECT_EQ(a.spec().variances, b.spec().variances);
}

// log p(x | state) from the model's expanded form (K + x.u + x^2.v per Gaussian), in double.
double StateLogLikelihood(const GmmModel& model, int32_t state, const std::vector<double>& x) {
  double total = 0.0;
  for (uint32_t g = model.gauss_begin(state); g < model.gauss_end(state); ++g) {
    double log_like = model.gconst(g);
    for (int32_t d = 0; d < model.dim(); ++d) {
      log_like += x[d] * model.mean_invvar(g)[d] + x[d] * x[d] * model.neg_half_invvar(g)[d];
    }
    total += std::exp(log_like);
  }
  return std::log(total);
}

TEST(HtkModelTest, ReadsStatesInDefinitionOrder) {
  const GmmModel model = Read(kMmf);
  EXPECT_EQ(model.source_format(), "htk");
  EXPECT_EQ(model.dim(), 2);
  ASSERT_EQ(model.num_states(), 3);  // the shared state counts once; varFloor1 is no state
  EXPECT_EQ(model.state_names(), (std::vector<std::string>{"mid", "a_s2", "b_s3"}));
  EXPECT_EQ(model.spec().gauss_begin, (std::vector<uint32_t>{0, 2, 3, 5}));
  EXPECT_EQ(model.spec().weights, (std::vector<float>{0.25f, 0.75f, 1.0f, 0.4f, 0.6f}));
  EXPECT_EQ(model.spec().means,
            (std::vector<float>{0.0f, 1.0f, -1.0f, 0.5f, 1.5f, -2.0f, 0.0f, 0.0f, 1.0f, 1.0f}));
  EXPECT_EQ(model.spec().variances,
            (std::vector<float>{2.0f, 0.5f, 1.0f, 4.0f, 0.25f, 1.0f, 2.0f, 0.5f, 1.0f, 1.0f}));
}

TEST(HtkModelTest, ComputesGconstAndLogLikelihood) {
  const GmmModel model = Read(kMmf);
  const double log_2pi = std::log(2.0 * std::numbers::pi);
  // a_s2: one Gaussian, mean (1.5, -2), variance (0.25, 1), weight 1; the file's GCONST is unused.
  EXPECT_NEAR(model.gconst(2), -log_2pi - 0.5 * std::log(0.25) - 0.5 * (1.5 * 1.5 / 0.25 + 4.0),
              1e-9);
  // "mid" at x = (0.5, -0.5): 0.25 N(x; (0, 1), (2, 0.5)) + 0.75 N(x; (-1, 0.5), (1, 4)).
  const double log_n1 =
      -log_2pi - 0.5 * std::log(2.0 * 0.5) - 0.5 * (0.5 * 0.5 / 2.0 + 1.5 * 1.5 / 0.5);
  const double log_n2 =
      -log_2pi - 0.5 * std::log(1.0 * 4.0) - 0.5 * (1.5 * 1.5 / 1.0 + 1.0 * 1.0 / 4.0);
  const double expected = std::log(0.25 * std::exp(log_n1) + 0.75 * std::exp(log_n2));
  EXPECT_NEAR(StateLogLikelihood(model, 0, {0.5, -0.5}), expected, 1e-5);
}

TEST(HtkModelTest, MapsHmmsToPhones) {
  const GmmModel model = Read(kMmf);
  const TransitionModel& tm = model.hmm();
  const HmmTopology& topo = tm.topology();
  EXPECT_EQ(topo.phones, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(topo.phone_to_entry, (std::vector<int32_t>{-1, 0, 1}));
  ASSERT_EQ(topo.entries.size(), 2u);
  const std::vector<HmmState> a = {
      {kNoPdf, kNoPdf, {{1, 1.0f}}},
      {0, 0, {{1, 0.5f}, {2, 0.5f}}},
      {1, 1, {{2, 0.7f}, {3, 0.3f}}},
      {kNoPdf, kNoPdf, {}},
  };
  EXPECT_EQ(topo.entries[0], a);
  EXPECT_EQ(topo.entries[1][0].transitions,
            (std::vector<std::pair<int32_t, float>>{{1, 0.9f}, {3, 0.1f}}));
  EXPECT_EQ(tm.tuples(),
            (std::vector<TransitionTuple>{{1, 1, 1, 1}, {1, 2, 0, 0}, {2, 1, 0, 0}, {2, 2, 2, 2}}));
  const std::vector<float> probs = {0.5f, 0.5f, 0.7f, 0.3f, 0.6f, 0.4f, 0.8f, 0.2f};
  ASSERT_EQ(tm.NumTransitionIds(), 8);
  for (int32_t tid = 1; tid <= 8; ++tid) {
    EXPECT_FLOAT_EQ(tm.TransitionIdToLogProb(tid), std::log(probs[tid - 1])) << tid;
  }
  EXPECT_TRUE(tm.IsSelfLoop(5));
  EXPECT_EQ(tm.TransitionIdToPdf(7), 2);
}

TEST(HtkModelTest, RoundTripKeepsGmmsAndTransitionModel) {
  const GmmModel model = Read(kMmf);
  const GmmModel again = Read(Write(model));
  ExpectSameGmms(model, again);
  EXPECT_EQ(model.state_names(), again.state_names());
  EXPECT_EQ(model.hmm(), again.hmm());
}

TEST(HtkModelTest, RoundTripWithoutHmmWritesOneHmmPerState) {
  GmmModelSpec spec;
  spec.dim = 3;
  spec.gauss_begin = {0, 1, 3};
  spec.weights = {1.0f, 1.0f / 3.0f, 2.0f / 3.0f};
  spec.means = {0.1f, -1e-7f, 12345.678f, 0.0f, -0.0f, 1.0f / 7.0f, 3.0f, 2.0f, 1.0f};
  spec.variances = {1.0f / 3.0f, 1e-20f, 7.5f, 1.0f, 2.0f, 3.0f, 0.125f, 1e10f, 0.3f};
  auto model = GmmModel::Create(spec);
  ASSERT_TRUE(model.ok()) << model.status();
  const GmmModel again = Read(Write(*model));
  ExpectSameGmms(*model, again);
  EXPECT_EQ(again.state_names(), (std::vector<std::string>{"s0", "s1"}));
  EXPECT_EQ(again.hmm().NumPhones(), 2);
  EXPECT_EQ(again.hmm().NumPdfs(), 2);
}

TEST(HtkModelTest, KaldiModelKeepsItsGmms) {
  std::ifstream is(testing::DataPath("kaldi-mono/final.mdl"), std::ios::binary);
  auto kaldi = ReadKaldiModel(is, "final.mdl");
  ASSERT_TRUE(kaldi.ok()) << kaldi.status();
  const GmmModel again = Read(Write(*kaldi));
  ExpectSameGmms(*kaldi, again);
  EXPECT_EQ(again.hmm().NumPhones(), kaldi->num_states());  // one HMM per state
}

// ---- Malformed input ----

constexpr char kOptions[] = "~o <STREAMINFO> 1 2 <VECSIZE> 2 <DIAGC>\n";
constexpr char kGaussian[] = "<MEAN> 2 0 0 <VARIANCE> 2 1 1";
constexpr char kTransP[] = "0 1 0\n0 0.5 0.5\n0 0 0";

// Options on line 1, an HMM on line 2 whose one emitting state, written on line 3, is `state`.
std::string OneStateMmf(const std::string& state, const std::string& transp = kTransP,
                        const std::string& options = kOptions) {
  return absl::StrCat(options, "~h \"x\" <BEGINHMM> <NUMSTATES> 3 <STATE> 2\n", state,
                      "\n<TRANSP> 3\n", transp, "\n<ENDHMM>\n");
}

// Reading `text` fails with a message that names the file, a line and contains `expected`.
void ExpectReadError(const std::string& text, const std::string& expected) {
  std::istringstream is(text);
  auto model = ReadHtkModel(is, "bad.mmf");
  ASSERT_FALSE(model.ok());
  const std::string message(model.status().message());
  EXPECT_TRUE(absl::StrContains(message, "bad.mmf: line ")) << message;
  EXPECT_TRUE(absl::StrContains(message, expected)) << message;
}

TEST(HtkModelTest, ErrorTestBaseIsValid) { Read(OneStateMmf(kGaussian)); }

TEST(HtkModelTest, TruncatedFile) {
  const std::string text = kMmf;
  ExpectReadError(text.substr(0, text.find("<endhmm>")),
                  "expected <ENDHMM>, found the end of the file");
  const size_t end = text.find("<endhmm>") + std::string("<endhmm>").size();
  for (size_t cut = text.find("~h \"b\"") + 1; cut < end; ++cut) {
    SCOPED_TRACE(absl::StrCat("cut at ", cut));
    ExpectReadError(text.substr(0, cut), "");
  }
}

TEST(HtkModelTest, UnknownMacro) {
  ExpectReadError(OneStateMmf("~s \"nope\""), "bad.mmf: line 3: unknown macro ~s \"nope\"");
  ExpectReadError(OneStateMmf("<MEAN> 2 0 0 ~v \"nope\""), "unknown macro ~v \"nope\"");
}

TEST(HtkModelTest, NanVariance) {
  ExpectReadError(OneStateMmf("<MEAN> 2 0 0 <VARIANCE> 2 nan 1"),
                  "line 3: <VARIANCE> value 1: nan is not a finite number");
}

TEST(HtkModelTest, ZeroOrNegativeVariance) {
  ExpectReadError(OneStateMmf("<MEAN> 2 0 0 <VARIANCE> 2\n1 0"), "line 4: <VARIANCE> value 2 is 0");
  ExpectReadError(OneStateMmf("<MEAN> 2 0 0 <VARIANCE> 2 -1 1"), "<VARIANCE> value 1 is -1");
}

TEST(HtkModelTest, NegativeWeight) {
  ExpectReadError(OneStateMmf(absl::StrCat("<NUMMIXES> 2 <MIXTURE> 1 -0.5 ", kGaussian,
                                           " <MIXTURE> 2 1.5 ", kGaussian)),
                  "mixture 1 has a negative weight -0.5");
}

TEST(HtkModelTest, WeightsNotSummingToOne) {
  ExpectReadError(OneStateMmf(absl::StrCat("<NUMMIXES> 2 <MIXTURE> 1 0.5 ", kGaussian,
                                           " <MIXTURE> 2 0.4 ", kGaussian)),
                  "state \"x_s2\": mixture weights sum to 0.9");
}

TEST(HtkModelTest, TransitionRowNotSummingToOne) {
  ExpectReadError(OneStateMmf(kGaussian, "0 1 0\n0 0.5 0.4\n0 0 0"),
                  "HMM \"x\": <TRANSP> row 2 sums to 0.9");
}

TEST(HtkModelTest, WrongVectorLength) {
  ExpectReadError(OneStateMmf("<MEAN> 3 0 0 0 <VARIANCE> 2 1 1"),
                  "<MEAN> has 3 values, <VECSIZE> is 2");
}

TEST(HtkModelTest, FullCovariance) {
  ExpectReadError(OneStateMmf(kGaussian, kTransP, "~o <VECSIZE> 2 <FULLC>\n"),
                  "line 1: unsupported covariance kind <FULLC>");
  ExpectReadError(OneStateMmf("<MEAN> 2 0 0 <INVCOVAR> 2 1 0 1"),
                  "unsupported full covariance <INVCOVAR>");
}

TEST(HtkModelTest, TwoStreams) {
  ExpectReadError(OneStateMmf(kGaussian, kTransP, "~o <STREAMINFO> 2 1 1 <VECSIZE> 2\n"),
                  "line 1: unsupported: 2 streams");
}

}  // namespace
}  // namespace gmmscore

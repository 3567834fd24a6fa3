// Kaldi final.mdl: the real monophone model from Kaldi (tests/data/kaldi-mono), binary and text,
// round trips and malformed files.
#include "formats/kaldi_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "tests/test_util.h"

namespace gmmscore {
namespace {

using testing::DataPath;
using testing::ReadFile;

absl::StatusOr<GmmModel> ReadFromString(const std::string& bytes, const std::string& name) {
  std::istringstream is(bytes);
  return ReadKaldiModel(is, name);
}

GmmModel LoadReal(const std::string& file) {
  auto m = ReadFromString(ReadFile(DataPath("kaldi-mono/" + file)), file);
  EXPECT_TRUE(m.ok()) << m.status();
  return *std::move(m);
}

void ExpectSameGmms(const GmmModel& a, const GmmModel& b, double rel) {
  ASSERT_EQ(a.num_states(), b.num_states());
  ASSERT_EQ(a.num_gauss(), b.num_gauss());
  ASSERT_EQ(a.dim(), b.dim());
  EXPECT_EQ(a.spec().gauss_begin, b.spec().gauss_begin);
  for (int64_t g = 0; g < a.num_gauss(); ++g) {
    EXPECT_NEAR(a.weight(g), b.weight(g), rel * a.weight(g) + 1e-12);
    for (int32_t d = 0; d < a.dim(); ++d) {
      ASSERT_NEAR(a.mean(g)[d], b.mean(g)[d], rel * std::abs(a.mean(g)[d]) + 1e-6) << g << "," << d;
      ASSERT_NEAR(a.variance(g)[d], b.variance(g)[d], rel * a.variance(g)[d]) << g << "," << d;
    }
  }
}

TEST(KaldiModel, ReadsTheRealMonophoneModel) {
  const GmmModel m = LoadReal("final.mdl");
  EXPECT_EQ(m.num_states(), 56);
  EXPECT_EQ(m.num_gauss(), 677);
  EXPECT_EQ(m.dim(), 39);
  EXPECT_EQ(m.min_gauss_per_state(), 1);
  EXPECT_EQ(m.max_gauss_per_state(), 53);
  EXPECT_EQ(m.source_format(), "kaldi");
  const TransitionModel& tm = m.hmm();
  EXPECT_EQ(tm.NumPdfs(), 56);
  EXPECT_EQ(tm.NumTransitionIds(), 120);
  EXPECT_EQ(tm.NumTransitionStates(), 56);
  EXPECT_EQ(tm.topology().phones.size(), 18u);
  EXPECT_EQ(tm.topology().entries.size(), 2u);
  // SIL (phone 1) has 5 emitting states; its state 0 has 4 transitions: ids 1..4.
  EXPECT_EQ(tm.TransitionIdToPhone(1), 1);
  EXPECT_EQ(tm.TransitionIdToPdf(1), 0);
  EXPECT_TRUE(tm.IsSelfLoop(1));
  EXPECT_FALSE(tm.IsSelfLoop(2));
  // Phone 2 state 0 (pdf 5) comes after SIL's 4+4+4+4+2 = 18 ids: ids 19 (loop) and 20.
  EXPECT_EQ(tm.TransitionIdToPhone(19), 2);
  EXPECT_EQ(tm.TransitionIdToPdf(19), 5);
  EXPECT_TRUE(tm.IsSelfLoop(19));
  EXPECT_NEAR(tm.TransitionIdToLogProb(1), -0.279526, 1e-6);
}

TEST(KaldiModel, BinaryAndTextAgreeAndGconstsMatchKaldis) {
  const GmmModel bin = LoadReal("final.mdl");
  const GmmModel text = LoadReal("final.txt.mdl");
  ExpectSameGmms(bin, text, 1e-6);
  EXPECT_EQ(bin.hmm().tuples(), text.hmm().tuples());
  EXPECT_EQ(bin.hmm().topology(), text.hmm().topology());
  // Kaldi wrote its own gconsts into the file; ours are recomputed in double.
  std::istringstream is(ReadFile(DataPath("kaldi-mono/final.txt.mdl")));
  std::string word;
  int64_t g = 0;
  while (is >> word) {
    if (word != "<GCONSTS>") continue;
    is >> word;  // [
    while (is >> word && word != "]") {
      EXPECT_NEAR(bin.gconst(g), std::stod(word), 2e-3 + 1e-5 * std::abs(std::stod(word))) << g;
      ++g;
    }
  }
  EXPECT_EQ(g, 677);
}

TEST(KaldiModel, RoundTripBinaryAndText) {
  const GmmModel original = LoadReal("final.mdl");
  for (bool binary : {true, false}) {
    std::ostringstream os;
    ASSERT_TRUE(WriteKaldiModel(original, os, binary).ok());
    auto back = ReadFromString(os.str(), "round-trip");
    ASSERT_TRUE(back.ok()) << back.status();
    ExpectSameGmms(original, *back, 2e-7);
    EXPECT_TRUE(back->hmm() == original.hmm());
  }
}

// Each malformed file must be refused with the file name and the place.
void ExpectError(const std::string& bytes, const std::string& what) {
  auto m = ReadFromString(bytes, "bad.mdl");
  ASSERT_FALSE(m.ok()) << "accepted a model with " << what;
  const std::string msg(m.status().message());
  EXPECT_NE(msg.find("bad.mdl"), std::string::npos) << msg;
  EXPECT_NE(msg.find(what), std::string::npos) << msg;
}

// The text model with pdf 0's weights multiplied by factor (gmm-boost-silence's change).
std::string ScaleFirstWeights(std::string text, double factor) {
  const std::string weights = "<WEIGHTS>  [ ";
  const size_t begin = text.find(weights) + weights.size();
  const size_t end = text.find(']', begin);
  std::istringstream in(text.substr(begin, end - begin));
  std::ostringstream out;
  out.precision(9);
  for (double v = 0; in >> v;) out << v * factor << ' ';
  return text.replace(begin, end - begin, out.str());
}

std::string ReplaceNth(std::string text, const std::string& anchor, const std::string& from,
                       const std::string& to) {
  const size_t at = text.find(anchor);
  const size_t pos = text.find(from, at);
  return text.replace(pos, from.size(), to);
}

// Weights that do not sum to 1 (a silence-boosted model) are kept as given: each Gaussian's
// log-likelihood gains log(factor), as in Kaldi's DiagGmm.
TEST(KaldiModel, BoostedWeightsAreScoredAsGiven) {
  const std::string text = ReadFile(DataPath("kaldi-mono/final.txt.mdl"));
  auto plain = ReadFromString(text, "final.txt.mdl");
  auto boosted = ReadFromString(ScaleFirstWeights(text, 1.25), "boosted.mdl");
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(boosted.ok()) << boosted.status();
  double sum = 0;
  for (int64_t g = 0; g < boosted->num_gauss_in(0); ++g) sum += boosted->weight(g);
  EXPECT_NEAR(sum, 1.25, 1e-5);
  for (int64_t g = 0; g < plain->num_gauss(); ++g) {
    const double gain = g < plain->num_gauss_in(0) ? std::log(1.25) : 0.0;
    EXPECT_NEAR(boosted->log_weight(g) - plain->log_weight(g), gain, 1e-6) << "Gaussian " << g;
  }
}

TEST(KaldiModel, MalformedFiles) {
  const std::string bin = ReadFile(DataPath("kaldi-mono/final.mdl"));
  const std::string text = ReadFile(DataPath("kaldi-mono/final.txt.mdl"));
  ExpectError(bin.substr(0, 100000), "byte");  // truncated binary
  ExpectError(bin.substr(0, 100000), "ends inside");
  ExpectError(text.substr(0, text.size() / 2), "byte");  // truncated text
  ExpectError(ReplaceNth(text, "<Triples>", "<Triples>", "<Trimples>"), "expected <Triples>");
  // The first Gaussian's inverse variances of pdf 0: NaN, zero and negative.
  const std::string inv = "<INV_VARS>  [\n  ";
  const size_t at = text.find(inv) + inv.size();
  const size_t end = text.find(' ', at);
  std::string nan = text, zero = text;
  nan.replace(at, end - at, "nan");
  zero.replace(at, end - at, "0");
  ExpectError(nan, "pdf 0: Gaussian 0, dimension 0: inverse variance nan");
  ExpectError(zero, "inverse variance 0 is not a finite number > 0");
  // Weights: pdf 0's first weight is 0.04859912.
  const std::string weights = "<WEIGHTS>  [ ";
  const size_t w = text.find(weights) + weights.size();
  std::string negative = text;
  negative.replace(w, 10, "-1");
  ExpectError(negative, "state 0, Gaussian 0: weight -1 is not >= 0");
  ExpectError(ScaleFirstWeights(text, 0.0), "state 0: weights sum to 0, not a finite number > 0");
  ExpectError(
      "<TransitionModel> <Topology> </Topology> <Triples> 0 </Triples> <LogProbs> [ 0 ] "
      "</LogProbs> </TransitionModel> ",
      "topology has no entries");
}

}  // namespace
}  // namespace gmmscore

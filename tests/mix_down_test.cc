// Mixing down (train/mix_down) by the rules of Kaldi's gmm-est --mix-down (AmDiagGmm::MergeByCount,
// DiagGmm::Merge): the cheapest pair by Kaldi's likelihood cost merges first, into the pooled
// Gaussian, down to the targets of SplitTargets; and gmmscore est --mix-down on the Kaldi data.
#include "train/mix_down.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "formats/kaldi_accs.h"
#include "formats/kaldi_model.h"
#include "formats/kaldi_model_copy.h"
#include "tests/test_util.h"
#include "train/kaldi_form_update.h"
#include "train/mix_up.h"
#include "train/mle_update.h"

namespace gmmscore::testing {
namespace {

struct Pdf {
  std::vector<float> weights, means, variances;
};

GmmModel MakeModel(int32_t dim, const std::vector<Pdf>& pdfs) {
  GmmModelSpec spec;
  spec.dim = dim;
  spec.gauss_begin = {0};
  for (const Pdf& pdf : pdfs) {
    spec.weights.insert(spec.weights.end(), pdf.weights.begin(), pdf.weights.end());
    spec.means.insert(spec.means.end(), pdf.means.begin(), pdf.means.end());
    spec.variances.insert(spec.variances.end(), pdf.variances.begin(), pdf.variances.end());
    spec.gauss_begin.push_back(uint32_t(spec.weights.size()));
  }
  return GmmModel::Create(std::move(spec)).value();
}

// Four Gaussians in two dimensions: A and D are light and 0.6 apart, B and C heavy and 0.5 apart;
// A and D are the cheaper pair to merge although further apart, as the cost scales with weight.
const Pdf kFour = {.weights = {0.1f, 0.4f, 0.4f, 0.1f},
                   .means = {3.0f, 1.0f, 0.0f, 0.0f, 0.5f, 0.0f, 3.6f, 1.0f},
                   .variances = {1.0f, 2.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 2.0f}};
enum { kA, kB, kC, kD };

// Kaldi's cost written out in double: w L(pooled var) - w_a L(var_a) - w_b L(var_b), with
// L(v) = -1/2 sum_d log v_d; the pair with the largest (least negative) value merges first.
double MergeCost(const GmmModel& m, int64_t a, int64_t b) {
  const double wa = m.weight(a), wb = m.weight(b), w = wa + wb;
  double cost = 0.0;
  for (int32_t d = 0; d < m.dim(); ++d) {
    const double ma = m.mean(a)[d], mb = m.mean(b)[d], va = m.variance(a)[d], vb = m.variance(b)[d];
    const double mean = (wa * ma + wb * mb) / w;
    const double var = (wa * (va + ma * ma) + wb * (vb + mb * mb)) / w - mean * mean;
    cost += -0.5 * (w * std::log(var) - wa * std::log(va) - wb * std::log(vb));
  }
  return cost;
}

// Gaussian g of merged is parts of model pooled: weights add, and so do the weighted first and
// second moments.
void ExpectPooled(const GmmModel& merged, int64_t g, const GmmModel& model,
                  const std::vector<int64_t>& parts) {
  double w = 0.0;
  for (int64_t p : parts) w += model.weight(p);
  EXPECT_NEAR(merged.weight(g), w, 1e-6);
  for (int32_t d = 0; d < model.dim(); ++d) {
    double first = 0.0, second = 0.0;
    for (int64_t p : parts) {
      const double m = model.mean(p)[d], v = model.variance(p)[d];
      first += model.weight(p) * m;
      second += model.weight(p) * (v + m * m);
    }
    const double m = merged.mean(g)[d], v = merged.variance(g)[d];
    EXPECT_NEAR(w * m, first, 1e-5) << "Gaussian " << g << ", dimension " << d;
    EXPECT_NEAR(w * (v + m * m), second, 1e-5) << "Gaussian " << g << ", dimension " << d;
  }
}

void ExpectSameGaussian(const GmmModel& a, int64_t ga, const GmmModel& b, int64_t gb) {
  EXPECT_EQ(a.weight(ga), b.weight(gb));
  for (int32_t d = 0; d < a.dim(); ++d) {
    EXPECT_EQ(a.mean(ga)[d], b.mean(gb)[d]);
    EXPECT_EQ(a.variance(ga)[d], b.variance(gb)[d]);
  }
}

TEST(MixDownTest, TheCheapestPairByKaldisCostMergesFirst) {
  const GmmModel model = MakeModel(2, {kFour});
  // By hand: A+D pools to weight 0.2, mean (3.3, 1), variance (1 + 0.5 x 0.5 x 0.6^2, 2) =
  // (1.09, 2); only dimension 0 changes, so the cost is -1/2 x 0.2 x log 1.09. B+C pools to
  // weight 0.8, mean (0.25, 0), variance (1 + 0.5 x 0.5 x 0.5^2, 1) = (1.0625, 1).
  EXPECT_NEAR(MergeCost(model, kA, kD), -0.1 * std::log(1.09), 1e-7);
  EXPECT_NEAR(MergeCost(model, kB, kC), -0.4 * std::log(1.0625), 1e-7);
  for (int64_t a = 0; a < 4; ++a) {
    for (int64_t b = 0; b < a; ++b) {
      if (a != kD || b != kA) {
        EXPECT_LT(MergeCost(model, a, b), MergeCost(model, kA, kD));
      }
    }
  }

  // To 3: A+D in D's place (the later of the pair), B and C as they were.
  auto three = MergePdfs(model, {3});
  ASSERT_TRUE(three.ok()) << three.status();
  ASSERT_EQ(three->num_gauss(), 3);
  ExpectSameGaussian(*three, 0, model, kB);
  ExpectSameGaussian(*three, 1, model, kC);
  EXPECT_NEAR(three->weight(2), 0.2, 1e-7);
  EXPECT_NEAR(three->mean(2)[0], 3.3, 1e-6);
  EXPECT_NEAR(three->mean(2)[1], 1.0, 1e-6);
  EXPECT_NEAR(three->variance(2)[0], 1.09, 1e-5);
  EXPECT_NEAR(three->variance(2)[1], 2.0, 1e-5);
  ExpectPooled(*three, 2, model, {kA, kD});

  // To 2: then B+C, in C's place.
  auto two = MergePdfs(model, {2});
  ASSERT_TRUE(two.ok()) << two.status();
  ASSERT_EQ(two->num_gauss(), 2);
  EXPECT_NEAR(two->weight(0), 0.8, 1e-7);
  EXPECT_NEAR(two->mean(0)[0], 0.25, 1e-6);
  EXPECT_NEAR(two->mean(0)[1], 0.0, 1e-6);
  EXPECT_NEAR(two->variance(0)[0], 1.0625, 1e-5);
  EXPECT_NEAR(two->variance(0)[1], 1.0, 1e-5);
  ExpectPooled(*two, 0, model, {kB, kC});
  ExpectPooled(*two, 1, model, {kA, kD});
}

TEST(MixDownTest, MergingToOnePoolsEverything) {
  const GmmModel model = MakeModel(2, {kFour});
  auto one = MergePdfs(model, {1});
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ(one->num_gauss(), 1);
  // By hand: mean (0.3 + 0.2 + 0.36, 0.1 + 0.1) = (0.86, 0.2); second moments
  // (0.1 x 10 + 0.4 x 1 + 0.4 x 1.25 + 0.1 x 13.96, 0.1 x 3 + 0.4 + 0.4 + 0.1 x 3) = (3.296, 1.4).
  EXPECT_NEAR(one->weight(0), 1.0, 1e-7);
  EXPECT_NEAR(one->mean(0)[0], 0.86, 1e-6);
  EXPECT_NEAR(one->mean(0)[1], 0.2, 1e-6);
  EXPECT_NEAR(one->variance(0)[0], 3.296 - 0.86 * 0.86, 1e-5);
  EXPECT_NEAR(one->variance(0)[1], 1.4 - 0.2 * 0.2, 1e-5);
  ExpectPooled(*one, 0, model, {kA, kB, kC, kD});
}

TEST(MixDownTest, EachPdfGoesToItsSplitTarget) {
  const Pdf one = {.weights = {1.0f}, .means = {0.5f, -1.0f}, .variances = {2.0f, 3.0f}};
  const Pdf three = {.weights = {0.2f, 0.3f, 0.5f},
                     .means = {0.0f, 0.0f, 1.0f, 1.0f, 2.0f, -2.0f},
                     .variances = {1.0f, 1.0f, 0.5f, 2.0f, 1.5f, 1.0f}};
  const Pdf two = {.weights = {0.5f, 0.5f},
                   .means = {1.0f, 2.0f, 3.0f, 4.0f},
                   .variances = {1.0f, 1.0f, 1.0f, 1.0f}};
  // Gaussians 4, 1, 3, 2: pdf 0 above its target, pdf 1 below, pdf 2 held to one by the min count
  // (2 x 20 >= 30), pdf 3 below.
  const GmmModel model = MakeModel(2, {kFour, one, three, two});
  const std::vector<float> occs = {1000, 500, 30, 5000};
  ASSERT_EQ(SplitTargets(occs, 8, 0.2f, 20.0f), (std::vector<int32_t>{2, 2, 1, 3}));
  auto merged = MixDown(model, occs, {.target = 8, .power = 0.2f, .min_count = 20.0f});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->num_gauss_in(0), 2);
  EXPECT_EQ(merged->num_gauss_in(1), 1);  // never split
  EXPECT_EQ(merged->num_gauss_in(2), 1);
  EXPECT_EQ(merged->num_gauss_in(3), 2);
  for (int32_t pdf = 0; pdf < 4; ++pdf) {
    double sum = 0.0;
    for (uint32_t g = merged->gauss_begin(pdf); g < merged->gauss_end(pdf); ++g) {
      sum += merged->weight(g);
    }
    EXPECT_NEAR(sum, 1.0, 1e-6) << "pdf " << pdf;
  }
  ExpectPooled(*merged, 0, model, {kB, kC});
  ExpectPooled(*merged, 1, model, {kA, kD});
  ExpectSameGaussian(*merged, 2, model, 4);
  ExpectPooled(*merged, 3, model, {5, 6, 7});
  ExpectSameGaussian(*merged, 4, model, 8);
  ExpectSameGaussian(*merged, 5, model, 9);
}

TEST(MixDownTest, TargetsAtOrAboveEveryCountChangeNothing) {
  const Pdf two = {.weights = {0.5f, 0.5f},
                   .means = {1.0f, 2.0f, 3.0f, 4.0f},
                   .variances = {1.0f, 1.0f, 1.0f, 1.0f}};
  const Pdf one = {.weights = {1.0f}, .means = {0.5f, -1.0f}, .variances = {2.0f, 3.0f}};
  const GmmModel model = MakeModel(2, {two, one});
  // The current total, shared out as the model already has it: {2, 1}.
  auto same = MixDown(model, {1000, 10}, {.target = 3});
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(same->spec().gauss_begin, model.spec().gauss_begin);
  EXPECT_EQ(same->spec().weights, model.spec().weights);
  EXPECT_EQ(same->spec().means, model.spec().means);
  EXPECT_EQ(same->spec().variances, model.spec().variances);
}

TEST(MixDownTest, TheCurrentTotalStillMergesAPdfAboveItsShare) {
  // As in Kaldi, the total is shared out by occupancy: 4 Gaussians over occupancies 1000 and 100
  // give targets {2, 2}, so the 3-Gaussian pdf merges to 2 and the other is not split.
  const Pdf one = {.weights = {1.0f}, .means = {0.5f, -1.0f}, .variances = {2.0f, 3.0f}};
  const Pdf three = {.weights = {0.2f, 0.3f, 0.5f},
                     .means = {0.0f, 0.0f, 1.0f, 1.0f, 2.0f, -2.0f},
                     .variances = {1.0f, 1.0f, 0.5f, 2.0f, 1.5f, 1.0f}};
  const GmmModel model = MakeModel(2, {one, three});
  ASSERT_EQ(SplitTargets({1000, 100}, 4, 0.2f, 20.0f), (std::vector<int32_t>{2, 2}));
  auto merged = MixDown(model, {1000, 100}, {.target = 4});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->num_gauss_in(0), 1);
  EXPECT_EQ(merged->num_gauss_in(1), 2);
}

TEST(MixDownTest, ATargetBelowThePdfCountMergesEveryPdfToOne) {
  // Kaldi's targets never go below one per pdf, and it accepts such a total.
  const GmmModel model = MakeModel(2, {kFour, kFour});
  auto merged = MixDown(model, {1000, 1000}, {.target = 1});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->num_gauss_in(0), 1);
  EXPECT_EQ(merged->num_gauss_in(1), 1);
  ExpectPooled(*merged, 1, model, {4, 5, 6, 7});
}

TEST(MixDownTest, BadInputIsRefused) {
  const GmmModel model = MakeModel(2, {kFour, kFour});
  auto wrong_occs = MixDown(model, {1000}, {.target = 4});
  ASSERT_FALSE(wrong_occs.ok());
  EXPECT_EQ(wrong_occs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_occs.status().message().find("one occupancy per pdf: 1 for 2 pdfs"),
            std::string::npos)
      << wrong_occs.status();
  for (int32_t target : {0, -5}) {
    auto bad_target = MixDown(model, {1000, 1000}, {.target = target});
    ASSERT_FALSE(bad_target.ok());
    EXPECT_NE(bad_target.status().message().find("target of at least 1"), std::string::npos)
        << bad_target.status();
  }
  EXPECT_FALSE(MergePdfs(model, {2}).ok());
  auto zero = MergePdfs(model, {2, 0});
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("pdf 1: cannot merge to 0"), std::string::npos)
      << zero.status();
}

std::string Cli() { return std::string(GMMSCORE_CLI); }

TEST(MixDownTest, EstMixesDownAsTheLibraryDoes) {
  // The shipped model has one Gaussian per pdf: mix it up first, as a recipe's earlier pass would,
  // and gather statistics for the result.
  TempDir dir;
  const std::string log = dir.file("log"), shipped = DataPath("kaldi-mono/final.mdl"),
                    model_in = dir.file("1.mdl"), acc_stats = Cli() + " acc-stats ",
                    data = " ark:" + DataPath("kaldi-mono/feats.ark") +
                           " ark:" + DataPath("kaldi-mono/ali.txt") + " ";
  ASSERT_EQ(RunCommand(acc_stats + shipped + data + dir.file("0.acc"), log), 0) << ReadFile(log);
  ASSERT_EQ(RunCommand(Cli() + " est --mix-up=150 --min-count=5 " + shipped + " " +
                           dir.file("0.acc") + " " + model_in,
                       log),
            0)
      << ReadFile(log);
  ASSERT_EQ(RunCommand(acc_stats + model_in + data + dir.file("acc"), log), 0) << ReadFile(log);
  auto model = ReadKaldiModelFile(model_in);
  auto stats = ReadModelStatsFile(dir.file("acc"));
  ASSERT_TRUE(model.ok() && stats.ok());
  auto updated =
      MleUpdate(MleOptions{}, stats->gmm, kGmmMeans | kGmmVariances | kGmmWeights, *model, nullptr);
  ASSERT_TRUE(updated.ok()) << updated.status();
  std::vector<float> occs;
  for (int32_t pdf = 0; pdf < stats->gmm.num_pdfs(); ++pdf) {
    occs.push_back(static_cast<float>(stats->gmm.PdfOccupancy(pdf)));
  }
  const int32_t target = 80;
  auto expected = MixDown(*updated, occs, {.target = target, .min_count = 5.0f});
  ASSERT_TRUE(expected.ok()) << expected.status();
  bool merged_pairwise = false;  // some pdf merged to 2 or more, not only pooled into one
  for (int32_t pdf = 0; pdf < expected->num_states(); ++pdf) {
    merged_pairwise |= expected->num_gauss_in(pdf) >= 2 &&
                       expected->num_gauss_in(pdf) < updated->num_gauss_in(pdf);
  }
  ASSERT_TRUE(merged_pairwise);

  // gmm-est --mix-down=N, and with --mix-up as well: merging comes first.
  ASSERT_EQ(RunCommand(Cli() + " est --update-flags=mvw --min-count=5 --mix-down=" +
                           std::to_string(target) + " " + model_in + " " + dir.file("acc") + " " +
                           dir.file("out.mdl"),
                       log),
            0)
      << ReadFile(log);
  const std::string est_log = ReadFile(log);
  const std::string merged_line = "Merged " + std::to_string(model->num_states()) +
                                  " states with target = " + std::to_string(target) +
                                  ", power = 0.2 and min_count = 5, merged from " +
                                  std::to_string(updated->num_gauss()) + " to " +
                                  std::to_string(expected->num_gauss());
  EXPECT_NE(est_log.find(merged_line), std::string::npos) << merged_line << "\n" << est_log;
  // The file holds what the library makes of the same model and statistics in Kaldi's own
  // parameters (train/kaldi_form_update.h): the update, then the merge.
  auto written = ReadKaldiStoredModel(dir.file("out.mdl"), true, true);
  auto stored = ReadKaldiStoredModel(model_in, true, true);
  ASSERT_TRUE(written.ok() && stored.ok());
  ASSERT_TRUE(MleUpdateKaldiForm(MleOptions{}, stats->gmm, kGmmMeans | kGmmVariances | kGmmWeights,
                                 &*stored, nullptr)
                  .ok());
  auto mixed = MixKaldiForm(
      occs, {.target = target, .min_count = 5.0f}, MixUpOptions(), [] { return 0.0; }, &*stored);
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  EXPECT_EQ(mixed->after_down, expected->num_gauss());
  ASSERT_EQ(written->pdfs.size(), stored->pdfs.size());
  for (size_t pdf = 0; pdf < stored->pdfs.size(); ++pdf) {
    EXPECT_EQ(written->pdfs[pdf].weights, stored->pdfs[pdf].weights) << "pdf " << pdf;
    EXPECT_EQ(written->pdfs[pdf].means_invvars.data, stored->pdfs[pdf].means_invvars.data);
    EXPECT_EQ(written->pdfs[pdf].inv_vars.data, stored->pdfs[pdf].inv_vars.data);
  }

  ASSERT_EQ(RunCommand(Cli() + " est --mix-down=" + std::to_string(target) +
                           " --mix-up=" + std::to_string(updated->num_gauss() + 20) + " " +
                           model_in + " " + dir.file("acc") + " " + dir.file("both.mdl"),
                       log),
            0)
      << ReadFile(log);
  const std::string both_log = ReadFile(log);
  const size_t merged_at = both_log.find("Merged "), split_at = both_log.find("Split ");
  ASSERT_NE(merged_at, std::string::npos) << both_log;
  ASSERT_NE(split_at, std::string::npos) << both_log;
  EXPECT_LT(merged_at, split_at);

  EXPECT_EQ(RunCommand(Cli() + " est --mix-down=-1 " + model_in + " " + dir.file("acc") + " " +
                           dir.file("bad.mdl"),
                       log),
            255);
  EXPECT_NE(ReadFile(log).find("target of at least 1"), std::string::npos) << ReadFile(log);
}

}  // namespace
}  // namespace gmmscore::testing

// Training (train/, model/gmm_stats, formats/kaldi_accs): one EM iteration against a float64
// re-estimation written here from the same start, on random models with varied Gaussians per
// state, a dimension not a multiple of 4, one frame, far frames and tiny variances; the
// likelihood never decreasing over ML iterations; every floor and removal rule of gmm-est; the
// mixing-up targets and splits; the transition update; Kaldi's accumulator format byte for byte;
// chunked statistics equal to unchunked ones; the real Kaldi model and alignments.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <numbers>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "formats/kaldi_accs.h"
#include "formats/kaldi_model.h"
#include "model/gmm_stats.h"
#include "model/random_model.h"
#include "tests/test_util.h"
#include "train/accumulate.h"
#include "train/gmm_init.h"
#include "train/mix_up.h"
#include "train/mle_update.h"
#include "train/transition_update.h"
#include "util/kaldi_blas.h"
#include "util/kaldi_random.h"

namespace gmmscore {
namespace {

using testing::DataPath;

// ---- A float64 EM iteration written independently of train/: long double posteriors by
// log-sum-exp over the pdf's Gaussians, sums, and the closed-form ML parameters.
struct RefParams {
  std::vector<double> weights, means, vars;
};

// The posteriors of frame t's pdf's Gaussians.
std::vector<long double> ReferencePosteriors(const GmmModel& model, const Matrix& frames, int32_t t,
                                             int32_t pdf) {
  std::vector<long double> ll;
  for (uint32_t g = model.gauss_begin(pdf); g < model.gauss_end(pdf); ++g) {
    long double v = std::log((long double)model.weight(g));
    for (int32_t d = 0; d < model.dim(); ++d) {
      const long double var = model.variance(g)[d], diff = frames.at(t, d) - model.mean(g)[d];
      v -= 0.5L * (std::log(var) + diff * diff / var);
    }
    ll.push_back(v);
  }
  long double max = ll[0], sum = 0;
  for (long double v : ll) max = std::max(max, v);
  for (long double& v : ll) sum += (v = std::exp(v - max));
  for (long double& v : ll) v /= sum;
  return ll;
}

// Weights and means from the posteriors' sums; variances from a second pass over the frames as
// sum gamma (x - mean)^2 / occ, so that the reference forms no difference of large numbers.
RefParams ReferenceReestimate(const GmmModel& model, const Matrix& frames,
                              const std::vector<int32_t>& pdf_of_frame) {
  const int32_t dim = model.dim();
  const size_t num_gauss = size_t(model.num_gauss());
  std::vector<long double> occ(num_gauss, 0), sx(num_gauss * dim, 0), centred(num_gauss * dim, 0);
  for (int32_t t = 0; t < frames.rows; ++t) {
    const int32_t pdf = pdf_of_frame[size_t(t)];
    const auto gamma = ReferencePosteriors(model, frames, t, pdf);
    for (uint32_t g = model.gauss_begin(pdf), i = 0; g < model.gauss_end(pdf); ++g, ++i) {
      occ[g] += gamma[i];
      for (int32_t d = 0; d < dim; ++d) sx[g * dim + d] += gamma[i] * frames.at(t, d);
    }
  }
  RefParams ref;
  for (int32_t pdf = 0; pdf < model.num_states(); ++pdf) {
    long double total = 0;
    for (uint32_t g = model.gauss_begin(pdf); g < model.gauss_end(pdf); ++g) total += occ[g];
    for (uint32_t g = model.gauss_begin(pdf); g < model.gauss_end(pdf); ++g) {
      ref.weights.push_back(double(occ[g] / total));
      for (int32_t d = 0; d < dim; ++d) ref.means.push_back(double(sx[g * dim + d] / occ[g]));
    }
  }
  for (int32_t t = 0; t < frames.rows; ++t) {
    const int32_t pdf = pdf_of_frame[size_t(t)];
    const auto gamma = ReferencePosteriors(model, frames, t, pdf);
    for (uint32_t g = model.gauss_begin(pdf), i = 0; g < model.gauss_end(pdf); ++g, ++i) {
      for (int32_t d = 0; d < dim; ++d) {
        const long double diff = frames.at(t, d) - (long double)ref.means[g * dim + d];
        centred[g * dim + d] += gamma[i] * diff * diff;
      }
    }
  }
  for (size_t i = 0; i < centred.size(); ++i) ref.vars.push_back(double(centred[i] / occ[i / dim]));
  return ref;
}

// Frames drawn from the model: each frame from its pdf's mixture, `sigmas` standard deviations
// scale (1: the model's own spread; larger: far from the means).
Matrix SampleFrames(const GmmModel& model, const std::vector<int32_t>& pdfs, double sigmas,
                    std::mt19937& rng) {
  Matrix frames(int32_t(pdfs.size()), model.dim());
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform;
  for (size_t t = 0; t < pdfs.size(); ++t) {
    const int32_t pdf = pdfs[t];
    double u = uniform(rng);
    uint32_t g = model.gauss_begin(pdf);
    for (; g + 1 < model.gauss_end(pdf); ++g) {
      if ((u -= model.weight(g)) < 0) break;
    }
    for (int32_t d = 0; d < model.dim(); ++d) {
      frames.at(int32_t(t), d) = static_cast<float>(
          model.mean(g)[d] + sigmas * std::sqrt(model.variance(g)[d]) * normal(rng));
    }
  }
  return frames;
}

GmmStats Accumulate(const GmmModel& model, const Matrix& frames, const std::vector<int32_t>& pdfs,
                    int32_t begin, int32_t end) {
  GmmStats stats = GmmStats::ForModel(model, kGmmAll);
  const GmmAccumulator acc(model);
  std::vector<double> post(size_t(model.max_gauss_per_state()));
  for (int32_t t = begin; t < end; ++t) {
    auto ll = acc.PdfPosteriors(pdfs[size_t(t)], frames.row(t), post.data());
    EXPECT_TRUE(ll.ok()) << ll.status();
    GmmAccumulator::AddFrame(pdfs[size_t(t)], frames.row(t), post.data(), 1.0, &stats);
    stats.total_log_like += *ll;
    stats.total_frames += 1;
  }
  return stats;
}

void ExpectMatchesReference(const GmmModel& updated, const RefParams& ref) {
  ASSERT_EQ(size_t(updated.num_gauss()), ref.weights.size());
  const int32_t dim = updated.dim();
  for (int64_t g = 0; g < updated.num_gauss(); ++g) {
    EXPECT_NEAR(updated.weight(g), ref.weights[size_t(g)], 1e-4 * ref.weights[size_t(g)] + 1e-7)
        << "Gaussian " << g;
    for (int32_t d = 0; d < dim; ++d) {
      const double var = ref.vars[size_t(g) * dim + d], mean = ref.means[size_t(g) * dim + d];
      // Means relative to their scale (the standard deviation where the mean is near 0).
      EXPECT_NEAR(updated.mean(g)[d], mean, 1e-4 * std::max(std::abs(mean), std::sqrt(var)))
          << "Gaussian " << g << " dimension " << d;
      EXPECT_NEAR(updated.variance(g)[d], var, 1e-4 * var)
          << "Gaussian " << g << " dimension " << d;
    }
  }
}

MleOptions KeepEverything() {
  MleOptions options;
  options.min_gaussian_occupancy = 0.0;
  options.min_gaussian_weight = 0.0;
  options.min_variance = 1e-30;
  options.remove_low_count_gaussians = false;
  return options;
}

struct EmCase {
  const char* name;
  RandomModelOptions model;
  int32_t frames;
  double sigmas;
};

TEST(TrainTest, OneIterationMatchesFloat64Reference) {
  RandomModelOptions varied;
  varied.num_states = 7;
  varied.dim = 13;
  varied.min_gauss = 1;
  varied.max_gauss = 6;
  RandomModelOptions tiny = varied;  // tiny variances far from the origin: x^2 sums of 1e4 with
  tiny.mean_offset = 100.0f;         // variances of 1e-3, where float32 statistics would cancel
  tiny.min_var = 1e-3f;
  tiny.max_var = 1e-2f;
  RandomModelOptions odd = varied;
  odd.dim = 39;
  odd.num_states = 3;
  const EmCase cases[] = {{"varied", varied, 20000, 1.0},
                          {"tiny variances, offset 100", tiny, 20000, 1.0},
                          {"far from the means", varied, 20000, 8.0},
                          {"dimension 39", odd, 5000, 1.0},
                          {"one frame", varied, 1, 1.0}};
  for (const EmCase& c : cases) {
    SCOPED_TRACE(c.name);
    const GmmModel model = RandomModel(c.model, 11);
    std::mt19937 rng(5);
    std::vector<int32_t> pdfs(size_t(c.frames));
    for (auto& p : pdfs) p = int32_t(rng() % uint32_t(model.num_states()));
    const Matrix frames = SampleFrames(model, pdfs, c.sigmas, rng);
    GmmStats stats = Accumulate(model, frames, pdfs, 0, frames.rows);
    MleSummary summary;
    auto updated = MleUpdate(KeepEverything(), stats, kGmmAll, model, &summary);
    if (c.frames == 1) {
      // One frame: its pdf's Gaussians get mean = the frame (posterior-weighted) and variance 0,
      // floored; every other pdf has no count and keeps its parameters, weights 1/G.
      ASSERT_TRUE(updated.ok()) << updated.status();
      const int32_t pdf = pdfs[0];
      for (uint32_t g = model.gauss_begin(pdf); g < model.gauss_end(pdf); ++g) {
        if (stats.occupancy[g] == 0.0) continue;
        for (int32_t d = 0; d < model.dim(); ++d) {
          EXPECT_FLOAT_EQ(updated->mean(g)[d], frames.at(0, d));
          EXPECT_FLOAT_EQ(updated->variance(g)[d], 1e-30f);
        }
      }
      EXPECT_EQ(summary.count, 1.0);
      continue;
    }
    ASSERT_TRUE(updated.ok()) << updated.status();
    EXPECT_NEAR(summary.count, c.frames, 1e-6);
    EXPECT_GT(summary.objective_change, 0.0);
    ExpectMatchesReference(*updated, ReferenceReestimate(model, frames, pdfs));
  }
}

TEST(TrainTest, LikelihoodNeverDecreasesOverIterations) {
  // A known 6-Gaussian mixture in 5 dimensions; EM from a different random start.
  RandomModelOptions truth_options;
  truth_options.num_states = 1;
  truth_options.dim = 5;
  truth_options.min_gauss = 6;
  truth_options.max_gauss = 6;
  const GmmModel truth = RandomModel(truth_options, 3);
  std::mt19937 rng(9);
  const std::vector<int32_t> pdfs(4000, 0);
  const Matrix frames = SampleFrames(truth, pdfs, 1.0, rng);
  GmmModel model = RandomModel(truth_options, 4);
  MleOptions options = KeepEverything();
  options.min_variance = 1e-6;
  double previous = -std::numeric_limits<double>::infinity(), first = 0;
  for (int iteration = 0; iteration < 15; ++iteration) {
    GmmStats stats = Accumulate(model, frames, pdfs, 0, frames.rows);
    EXPECT_GE(stats.total_log_like, previous - 1e-9 * std::abs(previous))
        << "iteration " << iteration;
    previous = stats.total_log_like;
    if (iteration == 0) first = previous;
    auto updated = MleUpdate(options, stats, kGmmAll, model, nullptr);
    ASSERT_TRUE(updated.ok()) << updated.status();
    model = *std::move(updated);
  }
  EXPECT_GT(previous - first, 0.1 * frames.rows);  // and it did climb
}

// ---- The floors and removal rules, on statistics made by hand for a 1-dimensional model.
GmmModel OneDimModel(const std::vector<std::vector<float>>& means_per_pdf) {
  GmmModelSpec spec;
  spec.dim = 1;
  spec.gauss_begin = {0};
  for (const auto& means : means_per_pdf) {
    for (float m : means) {
      spec.weights.push_back(1.0f / float(means.size()));
      spec.means.push_back(m);
      spec.variances.push_back(1.0f);
    }
    spec.gauss_begin.push_back(uint32_t(spec.weights.size()));
  }
  auto model = GmmModel::Create(spec);
  EXPECT_TRUE(model.ok()) << model.status();
  return *std::move(model);
}

// Statistics of `occ` frames at mean m with variance v, per Gaussian.
GmmStats HandStats(const GmmModel& model, const std::vector<double>& occ,
                   const std::vector<double>& mean, const std::vector<double>& var) {
  GmmStats stats = GmmStats::ForModel(model, kGmmAll);
  for (size_t g = 0; g < occ.size(); ++g) {
    stats.occupancy[g] = occ[g];
    stats.first[g] = occ[g] * mean[g];
    stats.second[g] = occ[g] * (var[g] + mean[g] * mean[g]);
  }
  return stats;
}

TEST(TrainTest, LowCountGaussiansAreRemovedButNeverTheLast) {
  const GmmModel model = OneDimModel({{0, 1, 2}, {5, 6, 7}});
  // pdf 0: Gaussian 1 has 5 < 10 frames; pdf 1: all three are below 10.
  const GmmStats stats =
      HandStats(model, {100, 5, 50, 1, 2, 3}, {0.5, 1.5, 2.5, 5.5, 6.5, 7.5}, {2, 2, 2, 2, 2, 2});
  MleSummary summary;
  auto updated = MleUpdate(MleOptions{}, stats, kGmmAll, model, &summary);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(summary.removed_gaussians, 3);
  ASSERT_EQ(updated->num_gauss_in(0), 2);
  ASSERT_EQ(updated->num_gauss_in(1), 1);
  // Updated: weights renormalised over the two kept (100/155 and 50/155 of 150/155).
  EXPECT_NEAR(updated->weight(0), 100.0 / 150.0, 1e-6);
  EXPECT_NEAR(updated->weight(1), 50.0 / 150.0, 1e-6);
  EXPECT_NEAR(updated->mean(0)[0], 0.5, 1e-6);
  EXPECT_NEAR(updated->variance(1)[0], 2.0, 1e-5);
  // pdf 1 keeps its last Gaussian, not updated (3 frames), alone: weight 1.
  EXPECT_EQ(updated->mean(2)[0], 7.0f);
  EXPECT_EQ(updated->variance(2)[0], 1.0f);
  EXPECT_FLOAT_EQ(updated->weight(2), 1.0f);
}

TEST(TrainTest, WithoutRemovalLowCountGaussiansKeepParametersAndGetAFlooredWeight) {
  const GmmModel model = OneDimModel({{0, 1}});
  const GmmStats stats = HandStats(model, {1e7, 50}, {0.5, 1.5}, {2, 2});
  MleOptions options;
  options.remove_low_count_gaussians = false;
  MleSummary summary;
  auto updated = MleUpdate(options, stats, kGmmAll, model, &summary);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(summary.removed_gaussians, 0);
  // gmm-est's warning, in its words.
  ASSERT_EQ(summary.warnings.size(), 1u);
  EXPECT_EQ(summary.warnings[0],
            "Gaussian has too little data but not removing it because "
            "remove-low-count-gaussians == false: g = 1, occ = 50, weight = 4.99998e-06");
  // Gaussian 1: 50 frames, but weight 5e-6 < 1e-5: not updated, weight max(5e-6, 1e-5).
  EXPECT_EQ(updated->mean(1)[0], 1.0f);
  EXPECT_FLOAT_EQ(updated->weight(1), 1e-5f);
  EXPECT_NEAR(updated->mean(0)[0], 0.5, 1e-6);
  // With removal (the default) it goes.
  auto removed = MleUpdate(MleOptions{}, stats, kGmmAll, model, &summary);
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(removed->num_gauss(), 1);
  EXPECT_EQ(summary.removed_gaussians, 1);
  ASSERT_EQ(summary.warnings.size(), 1u);
  EXPECT_EQ(summary.warnings[0],
            "Too little data - removing Gaussian (weight 0.000005, occupation count 50.000000, "
            "vector size 1)");
}

TEST(TrainTest, VarianceFloors) {
  const GmmModel model = OneDimModel({{0, 1}});
  const GmmStats stats = HandStats(model, {100, 100}, {0.5, 1.5}, {1e-5, 2});
  MleSummary summary;
  auto updated = MleUpdate(MleOptions{}, stats, kGmmAll, model, &summary);
  ASSERT_TRUE(updated.ok());
  EXPECT_FLOAT_EQ(updated->variance(0)[0], 0.001f);  // --min-variance
  EXPECT_NEAR(updated->variance(1)[0], 2.0, 1e-5);
  EXPECT_EQ(summary.floored_elements, 1);
  EXPECT_EQ(summary.floored_gaussians, 1);
  MleOptions vector_floor;
  vector_floor.variance_floor = {3.0};  // replaces min_variance
  updated = MleUpdate(vector_floor, stats, kGmmAll, model, &summary);
  ASSERT_TRUE(updated.ok());
  EXPECT_FLOAT_EQ(updated->variance(0)[0], 3.0f);
  EXPECT_FLOAT_EQ(updated->variance(1)[0], 3.0f);
  EXPECT_EQ(summary.floored_elements, 2);
  // Relative to the global variance: the pooled frames' mean is 1 and variance
  // (1e-5 + 2) / 2 + 0.25 = 1.250005.
  auto relative = RelativeVarianceFloor(stats, 0.1);
  ASSERT_TRUE(relative.ok());
  EXPECT_NEAR((*relative)[0], 0.1250005, 1e-9);
}

TEST(TrainTest, UpdateFlagsChangeOnlyWhatTheyName) {
  const GmmModel model = OneDimModel({{0, 1}});
  const GmmStats stats = HandStats(model, {300, 100}, {0.5, 1.5}, {2, 3});
  // Weights only.
  auto w = MleUpdate(MleOptions{}, stats, kGmmWeights, model, nullptr);
  ASSERT_TRUE(w.ok());
  EXPECT_FLOAT_EQ(w->weight(0), 0.75f);
  EXPECT_EQ(w->mean(0)[0], 0.0f);
  EXPECT_EQ(w->variance(0)[0], 1.0f);
  // Variances only: about the old mean, var + (old mean - new mean)^2.
  auto v = MleUpdate(MleOptions{}, stats, kGmmVariances, model, nullptr);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->mean(0)[0], 0.0f);
  EXPECT_FLOAT_EQ(v->weight(0), 0.5f);
  EXPECT_NEAR(v->variance(0)[0], 2.0 + 0.25, 1e-6);
  EXPECT_NEAR(v->variance(1)[0], 3.0 + 0.25, 1e-6);
  // Means only.
  auto m = MleUpdate(MleOptions{}, stats, kGmmMeans, model, nullptr);
  ASSERT_TRUE(m.ok());
  EXPECT_NEAR(m->mean(1)[0], 1.5, 1e-6);
  EXPECT_EQ(m->variance(1)[0], 1.0f);
  // Statistics without variances cannot update them.
  GmmStats means_only = GmmStats::ForModel(model, kGmmMeans);
  EXPECT_FALSE(MleUpdate(MleOptions{}, means_only, kGmmAll, model, nullptr).ok());
}

TEST(TrainTest, UpdateFlagsParseAsKaldis) {
  EXPECT_EQ(*ParseGmmFlags("mvwt"), kGmmAll);
  EXPECT_EQ(*ParseGmmFlags("a"), kGmmAll);
  EXPECT_EQ(*ParseGmmFlags("wm"), kGmmMeans | kGmmWeights);
  EXPECT_EQ(*ParseGmmFlags(""), 0);
  EXPECT_FALSE(ParseGmmFlags("mvx").ok());
  EXPECT_EQ(AugmentGmmFlags(kGmmVariances), kGmmVariances | kGmmMeans | kGmmWeights);
  EXPECT_EQ(GmmFlagsToString(kGmmAll), "mvwt");
}

// ---- Mixing up.
TEST(TrainTest, SplitTargetsFollowPowerAndMinCount) {
  // pdf 1 cannot grow: (1 + 1) x 20 >= 10; pdf 2 has no count; pdf 0 takes the rest.
  EXPECT_EQ(SplitTargets({1000, 10, 0}, 10, 1.0f, 20.0f), (std::vector<int32_t>{8, 1, 1}));
  // Power 0.5: shares 10 and 100; Gaussians go where occ^power / n is largest.
  EXPECT_EQ(SplitTargets({100, 10000}, 6, 0.5f, 20.0f), (std::vector<int32_t>{1, 5}));
  // min-count stops the total short of the target: 1000 / 20 = 50 at most (49 + 1 > 50 ...).
  const auto capped = SplitTargets({1000}, 100, 0.2f, 20.0f);
  EXPECT_EQ(capped, (std::vector<int32_t>{49}));
  // A target below the pdf count leaves one per pdf.
  EXPECT_EQ(SplitTargets({5, 5}, 1, 0.2f, 20.0f), (std::vector<int32_t>{1, 1}));
}

TEST(TrainTest, MixUpSplitsTheHeaviestGaussians) {
  RandomModelOptions options;
  options.num_states = 3;
  options.dim = 7;
  options.min_gauss = 1;
  options.max_gauss = 3;
  const GmmModel model = RandomModel(options, 21);
  const std::vector<float> occs = {5000, 800, 10};
  MixUpOptions mix{.target = 20, .power = 0.2f, .min_count = 20.0f, .perturb_factor = 0.01f};
  KaldiRandom random;
  auto normal = [&] { return double{random.Gauss()}; };
  const std::vector<int32_t> targets = SplitTargets(occs, 20, 0.2f, 20.0f);
  auto mixed = SplitPdfs(model, targets, mix.perturb_factor, normal);
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  for (int32_t pdf = 0; pdf < 3; ++pdf) {
    EXPECT_EQ(mixed->num_gauss_in(pdf), std::max(model.num_gauss_in(pdf), targets[size_t(pdf)]))
        << "pdf " << pdf;
    double sum = 0;
    for (uint32_t g = mixed->gauss_begin(pdf); g < mixed->gauss_end(pdf); ++g)
      sum += mixed->weight(g);
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
  // The first split of a one-Gaussian pdf: halves of the weight, means symmetric about the old
  // one by a small multiple of sigma, variances copied.
  RandomModelOptions single = options;
  single.num_states = 1;
  single.min_gauss = 1;
  single.max_gauss = 1;
  const GmmModel one = RandomModel(single, 2);
  mix.target = 2;
  auto two = SplitPdfs(one, SplitTargets({1000}, mix.target, mix.power, mix.min_count),
                       mix.perturb_factor, normal);
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->num_gauss(), 2);
  EXPECT_FLOAT_EQ(two->weight(0), 0.5f);
  EXPECT_FLOAT_EQ(two->weight(1), 0.5f);
  for (int32_t d = 0; d < one.dim(); ++d) {
    const double sigma = std::sqrt(one.variance(0)[d]);
    EXPECT_NEAR(two->mean(0)[d] + two->mean(1)[d], 2.0 * one.mean(0)[d], 1e-5 * (1 + sigma));
    EXPECT_LT(std::abs(two->mean(1)[d] - one.mean(0)[d]), 0.06 * sigma);
    EXPECT_EQ(two->variance(1)[d], one.variance(0)[d]);
  }
}

// ---- Transitions, on the real Kaldi transition model.
GmmModel KaldiModel() {
  auto model = ReadKaldiModelFile(DataPath("kaldi-mono/final.mdl"));
  EXPECT_TRUE(model.ok()) << model.status();
  return *std::move(model);
}

TEST(TrainTest, TransitionUpdateFloorsAndSkipsAsKaldi) {
  const GmmModel model = KaldiModel();
  const TransitionModel& hmm = model.hmm();
  TransitionStats counts(size_t(hmm.NumTransitionIds()) + 1, 0.0);
  // Three transition-states of two transitions (self-loop and forward): 90 / 10; 1000 / 1
  // (floored); 3 in all (< 5, skipped).
  std::vector<int32_t> two;
  for (int32_t ts = 1; ts <= hmm.NumTransitionStates() && two.size() < 3; ++ts) {
    if (hmm.NumTransitionIndices(ts) == 2) two.push_back(ts);
  }
  ASSERT_EQ(two.size(), 3u);
  const int32_t a = hmm.FirstTransitionId(two[0]), b = hmm.FirstTransitionId(two[1]),
                c = hmm.FirstTransitionId(two[2]);
  counts[size_t(a)] = 90;
  counts[size_t(a + 1)] = 10;
  counts[size_t(b)] = 1000;
  counts[size_t(b + 1)] = 1;
  counts[size_t(c)] = 3;
  TransitionUpdateSummary summary;
  auto updated = MleUpdateTransitions(TransitionUpdateOptions{}, counts, hmm, &summary);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_FLOAT_EQ(updated->TransitionIdToLogProb(a), std::log(0.9f));
  EXPECT_FLOAT_EQ(updated->TransitionIdToLogProb(a + 1), std::log(0.1f));
  // 1/1001 is floored at 0.01, renormalised and floored three times.
  float p[2] = {float(1000.0 / 1001.0), float(1.0 / 1001.0)};
  for (int round = 0; round < 3; ++round) {
    const float scale = float(1.0 / double(p[0] + p[1]));
    for (float& x : p) x = std::max(x * scale, 0.01f);
  }
  EXPECT_FLOAT_EQ(updated->TransitionIdToLogProb(b), std::log(p[0]));
  EXPECT_FLOAT_EQ(updated->TransitionIdToLogProb(b + 1), std::log(p[1]));
  EXPECT_EQ(updated->TransitionIdToLogProb(c), hmm.TransitionIdToLogProb(c));
  EXPECT_EQ(summary.floored, 1);
  EXPECT_EQ(summary.count, 1104);
  // Every transition-state of several transitions without counts is skipped too.
  int32_t several = 0;
  for (int32_t ts = 1; ts <= hmm.NumTransitionStates(); ++ts)
    several += hmm.NumTransitionIndices(ts) > 1;
  EXPECT_EQ(summary.skipped, several - 2);
  // Statistics of another model's size are refused.
  counts.pop_back();
  EXPECT_FALSE(MleUpdateTransitions(TransitionUpdateOptions{}, counts, hmm, nullptr).ok());
}

// Kaldi's Vector::Sum is OpenBLAS's stride-0 dot product: its order decides the last bit, and a
// sum that skips it renormalises the silence states' four transitions differently.
TEST(TrainTest, SumsRoundAsKaldisBlasRoundsThem) {
  const float f = std::ldexp(1.0f, -24);  // half an ulp of 1
  // Pairs in float (1 + f ties to 1), then the pairs in double.
  EXPECT_EQ(KaldiFloatSum(std::vector<float>{1.0f, f, f, 0.0f}), 1.0f);
  EXPECT_EQ(static_cast<float>(1.0 + f + f), 1.0f + 2 * f);  // what a plain sum gives
  EXPECT_EQ(KaldiFloatSum(std::vector<float>{0.25f, 0.5f, 0.125f}), 0.875f);
  EXPECT_EQ(KaldiFloatSum(std::vector<float>{}), 0.0f);
  // Elements 0 + 2 and 1 + 3 of each block of four, then the two.
  const double d = std::ldexp(1.0, -53);  // half an ulp of 1
  EXPECT_EQ(KaldiDoubleSum(std::vector<double>{1.0, d, 0.0, d}), 1.0 + 2 * d);
  EXPECT_EQ(1.0 + d + 0.0 + d, 1.0);  // what a plain sum gives
  EXPECT_EQ(KaldiDoubleSum(std::vector<double>{1, 2, 3, 4, 5, 6}), 21.0);
}

// ---- Kaldi's accumulator format.
std::string Int32Bytes(int32_t v) { return std::string("\4") + std::string((const char*)&v, 4); }
template <typename T>
std::string Raw(const std::vector<T>& v) {
  return std::string((const char*)v.data(), v.size() * sizeof(T));
}

TEST(TrainTest, AccumulatorFileIsKaldisByteForByte) {
  ModelStats stats;
  stats.transitions = {0.0, 3.0, 1.5};
  stats.gmm.dim = 2;
  stats.gmm.flags = kGmmAll;
  stats.gmm.gauss_begin = {0, 2};
  stats.gmm.occupancy = {1.5, 2.5};
  stats.gmm.first = {1, 2, 3, 4};
  stats.gmm.second = {5, 6, 7, 8};
  stats.gmm.total_log_like = -40.25;
  stats.gmm.total_frames = 4.0;
  std::ostringstream os;
  KaldiWriter writer(os, true);
  writer.BinaryMarker();
  WriteKaldiModelStats(stats, writer);
  // What gmm-acc-stats-ali writes: the transition accs in double, the GMM statistics in float.
  const uint16_t flags = 15;
  const double like = -40.25, frames = 4.0;
  const std::string expected =
      std::string("\0B", 2) + "DV " + Int32Bytes(3) + Raw(std::vector<double>{0, 3, 1.5}) +
      "<NUMPDFS> " + Int32Bytes(1) + "<GMMACCS> <VECSIZE> " + Int32Bytes(2) + "<NUMCOMPONENTS> " +
      Int32Bytes(2) + "<FLAGS> " + "\xFE" + std::string((const char*)&flags, 2) +
      "<OCCUPANCY> FV " + Int32Bytes(2) + Raw(std::vector<float>{1.5f, 2.5f}) + "<MEANACCS> FM " +
      Int32Bytes(2) + Int32Bytes(2) + Raw(std::vector<float>{1, 2, 3, 4}) + "<DIAGVARACCS> FM " +
      Int32Bytes(2) + Int32Bytes(2) + Raw(std::vector<float>{5, 6, 7, 8}) +
      "</GMMACCS> <total_like> \x08" + std::string((const char*)&like, 8) + "<total_frames> \x08" +
      std::string((const char*)&frames, 8);
  EXPECT_EQ(os.str(), expected);

  // Read back, binary and text; and without the totals, as older Kaldi versions wrote.
  for (bool binary : {true, false}) {
    std::ostringstream out;
    KaldiWriter w(out, binary);
    w.BinaryMarker();
    WriteKaldiModelStats(stats, w);
    std::string bytes = out.str();
    for (bool totals : {true, false}) {
      if (!totals) bytes = bytes.substr(0, bytes.find("<total_like>"));
      std::istringstream is(bytes);
      KaldiReader reader(is, "accs", KaldiReader::ConsumeBinaryMarker(is));
      auto read = ReadKaldiModelStats(reader);
      ASSERT_TRUE(read.ok()) << read.status() << " binary " << binary;
      EXPECT_EQ(read->transitions, stats.transitions);
      EXPECT_EQ(read->gmm.occupancy, stats.gmm.occupancy);
      EXPECT_EQ(read->gmm.first, stats.gmm.first);
      EXPECT_EQ(read->gmm.second, stats.gmm.second);
      EXPECT_EQ(read->gmm.gauss_begin, stats.gmm.gauss_begin);
      EXPECT_EQ(read->gmm.total_log_like, totals ? -40.25 : 0.0);
    }
  }
}

TEST(TrainTest, BadAccumulatorFilesAreRefusedWithThePlace) {
  ModelStats stats;
  stats.transitions = {0.0, 3.0};
  stats.gmm.dim = 2;
  stats.gmm.flags = kGmmAll;
  stats.gmm.gauss_begin = {0, 1};
  stats.gmm.occupancy = {1.5};
  stats.gmm.first = {1, 2};
  stats.gmm.second = {5, 6};
  std::ostringstream out;
  KaldiWriter w(out, true);
  w.BinaryMarker();
  WriteKaldiModelStats(stats, w);
  const std::string good = out.str();
  auto read = [](const std::string& bytes) {
    std::istringstream is(bytes);
    KaldiReader reader(is, "1.acc", KaldiReader::ConsumeBinaryMarker(is));
    return ReadKaldiModelStats(reader).status();
  };
  ASSERT_TRUE(read(good).ok());
  // Truncated anywhere: an error naming the file.
  for (size_t cut : {size_t(5), good.size() / 2, good.size() - 20}) {
    const absl::Status s = read(good.substr(0, cut));
    EXPECT_FALSE(s.ok()) << cut;
    EXPECT_NE(s.message().find("1.acc"), std::string::npos) << s;
  }
  // A huge <NUMPDFS> is refused before anything is sized by it.
  std::string huge = good;
  const size_t at = huge.find("<NUMPDFS> ") + 11;
  const int32_t big = 1 << 27;
  huge.replace(at, 4, std::string((const char*)&big, 4));
  absl::Status s = read(huge);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("pdfs' statistics"), std::string::npos) << s;
  // A NaN statistic names the pdf.
  std::string nan = good;
  const size_t occ = nan.find("<OCCUPANCY> FV ") + 20;
  const float not_a_number = std::nanf("");
  nan.replace(occ, 4, std::string((const char*)&not_a_number, 4));
  s = read(nan);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("pdf 0"), std::string::npos) << s;
}

// ---- The real Kaldi model and its alignments.
TEST(TrainTest, KaldiDataAccumulatesAndReestimatesAsFloat64) {
  const GmmModel model = KaldiModel();
  const auto feats = testing::ReadTable("ark:" + DataPath("kaldi-mono/feats.ark"));
  const auto alis = testing::ParseInt32Archive(testing::ReadFile(DataPath("kaldi-mono/ali.txt")));
  ASSERT_EQ(feats.size(), 6u);
  const GmmAccumulator acc(model);
  ModelStats stats = ModelStats::ForModel(model, kGmmAll);
  Matrix all(0, model.dim());
  std::vector<int32_t> pdfs;
  TransitionStats counted(size_t(model.hmm().NumTransitionIds()) + 1, 0.0);
  for (const auto& [key, f] : feats) {
    auto like = acc.AccumulateAlignment(f, alis.at(key), &stats);
    ASSERT_TRUE(like.ok()) << key << ": " << like.status();
    for (int32_t t = 0; t < f.rows; ++t) {
      const int32_t tid = alis.at(key)[size_t(t)];
      counted[size_t(tid)] += 1;
      pdfs.push_back(model.hmm().TransitionIdToPdf(tid));
      all.data.insert(all.data.end(), f.row(t), f.row(t) + f.cols);
      ++all.rows;
    }
  }
  EXPECT_EQ(stats.transitions, counted);
  EXPECT_EQ(stats.gmm.total_frames, 1598);
  // Kaldi's own average over these alignments (gmm-acc-stats-ali's log): -90.63 per frame.
  EXPECT_NEAR(stats.gmm.total_log_like / 1598, -90.633, 0.01);
  // The update of every Gaussian with enough data equals the float64 re-estimation.
  auto updated = MleUpdate(KeepEverything(), stats.gmm, kGmmAll, model, nullptr);
  ASSERT_TRUE(updated.ok()) << updated.status();
  const RefParams ref = ReferenceReestimate(model, all, pdfs);
  const int32_t dim = model.dim();
  int checked = 0;
  for (int64_t g = 0; g < model.num_gauss(); ++g) {
    if (stats.gmm.occupancy[size_t(g)] < 1.0) continue;  // variances of a fraction of a frame
    ++checked;
    EXPECT_NEAR(updated->weight(g), ref.weights[size_t(g)], 1e-4 * ref.weights[size_t(g)]);
    for (int32_t d = 0; d < dim; ++d) {
      const double var = ref.vars[size_t(g) * dim + d], mean = ref.means[size_t(g) * dim + d];
      EXPECT_NEAR(updated->mean(g)[d], mean, 1e-4 * std::max(std::abs(mean), std::sqrt(var)));
      EXPECT_NEAR(updated->variance(g)[d], var, 1e-4 * var + 1e-7) << g << " " << d;
    }
  }
  EXPECT_GT(checked, 100);
}

TEST(TrainTest, ChunkedStatisticsEqualUnchunked) {
  RandomModelOptions options;
  options.num_states = 5;
  options.dim = 11;
  const GmmModel model = RandomModel(options, 8);
  std::mt19937 rng(3);
  std::vector<int32_t> pdfs(3001);
  for (auto& p : pdfs) p = int32_t(rng() % 5);
  const Matrix frames = SampleFrames(model, pdfs, 1.0, rng);
  const GmmStats whole = Accumulate(model, frames, pdfs, 0, frames.rows);
  GmmStats chunked = Accumulate(model, frames, pdfs, 0, 1000);
  for (int32_t begin = 1000; begin < frames.rows; begin += 777) {
    ASSERT_TRUE(
        chunked.Add(Accumulate(model, frames, pdfs, begin, std::min(frames.rows, begin + 777)))
            .ok());
  }
  auto near = [](const std::vector<double>& a, const std::vector<double>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-12 * (1 + std::abs(b[i])));
  };
  near(chunked.occupancy, whole.occupancy);
  near(chunked.first, whole.first);
  near(chunked.second, whole.second);
  EXPECT_NEAR(chunked.total_log_like, whole.total_log_like, 1e-9 * std::abs(whole.total_log_like));
  // Statistics of another model do not add.
  options.num_states = 6;
  EXPECT_FALSE(chunked.Add(GmmStats::ForModel(RandomModel(options, 8), kGmmAll)).ok());
}

TEST(TrainTest, BadUtterancesLeaveTheStatisticsAlone) {
  const GmmModel model = KaldiModel();
  const GmmAccumulator acc(model);
  const auto feats = testing::ReadTable("ark:" + DataPath("kaldi-mono/feats.ark"));
  const auto alis = testing::ParseInt32Archive(testing::ReadFile(DataPath("kaldi-mono/ali.txt")));
  const std::string key = feats.begin()->first;
  const Matrix& f = feats.begin()->second;
  ModelStats stats = ModelStats::ForModel(model, kGmmAll);
  const ModelStats empty = stats;
  auto expect_error = [&](const Matrix& x, std::vector<int32_t> ali, const std::string& says) {
    auto like = acc.AccumulateAlignment(x, ali, &stats);
    ASSERT_FALSE(like.ok());
    EXPECT_NE(like.status().message().find(says), std::string::npos) << like.status();
    EXPECT_EQ(stats.gmm.occupancy, empty.gmm.occupancy);
    EXPECT_EQ(stats.transitions, empty.transitions);
  };
  std::vector<int32_t> ali = alis.at(key);
  std::vector<int32_t> longer = ali;
  longer.push_back(ali.back());
  expect_error(f, longer, "the alignment has");
  std::vector<int32_t> unknown = ali;
  unknown[7] = 999;
  expect_error(f, unknown, "frame 7: transition-id 999 is not in the model");
  Matrix nan = f;
  nan.at(12, 3) = std::nanf("");
  expect_error(nan, ali, "frame 12, dimension 3 is nan");
  Matrix narrow(f.rows, 13);
  expect_error(narrow, ali, "features have dimension 13");
  // Posteriors: an unknown transition-id, a NaN weight.
  TransitionPosterior post(size_t(f.rows), {{ali[0], 1.0f}});
  post[4] = {{0, 1.0f}};
  double weight = 0;
  EXPECT_FALSE(acc.AccumulatePosteriors(f, post, &stats, &weight).ok());
  post[4] = {{ali[0], std::nanf("")}};
  EXPECT_FALSE(acc.AccumulatePosteriors(f, post, &stats, &weight).ok());
  EXPECT_EQ(stats.gmm.occupancy, empty.gmm.occupancy);
}

TEST(TrainTest, PosteriorsOfOneEqualTheAlignment) {
  // gmm-acc-stats on ali-to-post's output gives what gmm-acc-stats-ali gives.
  const GmmModel model = KaldiModel();
  const GmmAccumulator acc(model);
  const auto feats = testing::ReadTable("ark:" + DataPath("kaldi-mono/feats.ark"));
  const auto alis = testing::ParseInt32Archive(testing::ReadFile(DataPath("kaldi-mono/ali.txt")));
  ModelStats from_ali = ModelStats::ForModel(model, kGmmAll), from_post = from_ali;
  for (const auto& [key, f] : feats) {
    ASSERT_TRUE(acc.AccumulateAlignment(f, alis.at(key), &from_ali).ok());
    TransitionPosterior post;
    for (int32_t tid : alis.at(key)) post.push_back({{tid, 1.0f}});
    double weight = 0;
    ASSERT_TRUE(acc.AccumulatePosteriors(f, post, &from_post, &weight).ok());
    EXPECT_EQ(weight, f.rows);
  }
  EXPECT_EQ(from_ali.transitions, from_post.transitions);
  EXPECT_EQ(from_ali.gmm.occupancy, from_post.gmm.occupancy);
  EXPECT_EQ(from_ali.gmm.first, from_post.gmm.first);
  EXPECT_EQ(from_ali.gmm.total_log_like, from_post.gmm.total_log_like);
}

TEST(TrainTest, GmmInitFromFramesAndTheReservoir) {
  RandomModelOptions options;
  options.num_states = 1;
  options.dim = 7;
  options.min_gauss = options.max_gauss = 5;
  const GmmModel truth = RandomModel(options, 4);
  std::mt19937 rng(2);
  const Matrix frames = SampleFrames(truth, std::vector<int32_t>(3000, 0), 1.0, rng);
  for (GmmInit init : {GmmInit::kRandomFrames, GmmInit::kKMeansPlusPlus}) {
    auto model = InitGmmFromFrames(frames, 5, init, rng);
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_EQ(model->num_gauss(), 5);
    // Every mean is one of the frames, every variance the frames' global variance.
    for (int64_t g = 0; g < 5; ++g) {
      bool found = false;
      for (int32_t t = 0; t < frames.rows && !found; ++t) {
        found = std::equal(frames.row(t), frames.row(t) + 7, model->mean(g).begin());
      }
      EXPECT_TRUE(found) << "Gaussian " << g;
      EXPECT_EQ(model->variance(g)[3], model->variance(0)[3]);
      EXPECT_FLOAT_EQ(model->weight(g), 0.2f);
    }
  }
  EXPECT_FALSE(InitGmmFromFrames(frames, 3001, GmmInit::kRandomFrames, rng).ok());
  Matrix flat(10, 3);
  EXPECT_FALSE(InitGmmFromFrames(flat, 2, GmmInit::kRandomFrames, rng).ok());

  // The reservoir keeps 100 of 3000, each frame about equally likely: the kept frames' mean is
  // near the whole set's.
  FrameReservoir reservoir(100, 7);
  for (int32_t t = 0; t < frames.rows; ++t) ASSERT_TRUE(reservoir.Add(frames.row(t), 7).ok());
  EXPECT_EQ(reservoir.frames().rows, 100);
  EXPECT_EQ(reservoir.seen(), 3000);
  EXPECT_FALSE(reservoir.Add(frames.row(0), 6).ok());
  FrameReservoir all(0, 7);
  for (int32_t t = 0; t < 50; ++t) ASSERT_TRUE(all.Add(frames.row(t), 7).ok());
  EXPECT_EQ(all.frames().rows, 50);
}

TEST(TrainTest, SplitPdfsReachesEachTarget) {
  RandomModelOptions options;
  options.num_states = 2;
  options.dim = 3;
  options.min_gauss = 1;
  options.max_gauss = 4;
  const GmmModel model = RandomModel(options, 6);
  std::mt19937 rng(1);
  std::normal_distribution<double> draw(0.0, 1.0);
  auto normal = [&] { return draw(rng); };
  auto split = SplitPdfs(model, {7, 1}, 0.1f, normal);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->num_gauss_in(0), std::max(7, model.num_gauss_in(0)));
  EXPECT_EQ(split->num_gauss_in(1), model.num_gauss_in(1));  // never merged down
  EXPECT_FALSE(SplitPdfs(model, {7}, 0.1f, normal).ok());
}

}  // namespace
}  // namespace gmmscore

namespace gmmscore {
namespace {

// gmm-est's draws: glibc's rand() from its unseeded state (1804289383, 846930886, ...), seeds 0
// and 1 alike, and RandGauss's Box-Muller in float with the first draw under the logarithm.
TEST(KaldiRandom, IsTheUnseededRandSequenceAndKaldisRandGauss) {
  KaldiRandom a, zero(0);
  EXPECT_EQ(a.Rand(), 1804289383);
  EXPECT_EQ(a.Rand(), 846930886);
  EXPECT_EQ(a.Rand(), 1681692777);
  EXPECT_EQ(zero.Rand(), 1804289383);
  KaldiRandom b;
  const double u1 = (1804289383 + 1.0) / (2147483647 + 2.0);
  const double u2 = (846930886 + 1.0) / (2147483647 + 2.0);
  const double expected = std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
  EXPECT_NEAR(b.Gauss(), expected, 1e-6);
  KaldiRandom c(7);
  EXPECT_NE(c.Rand(), 1804289383);
  // RandInt: rand() % n, and no draw where there is one choice.
  KaldiRandom d;
  EXPECT_EQ(d.Int(4, 4), 4);
  EXPECT_EQ(d.Int(0, 9), 1804289383 % 10);
  EXPECT_EQ(d.Int(2, 4), 2 + 846930886 % 3);
  // StringHasher: "ab" = 'a' * 7853 + 'b'.
  EXPECT_EQ(KaldiKeySeed("ab"), 97u * 7853u + 98u);
  EXPECT_EQ(KaldiKeySeed(""), 0u);
}

}  // namespace
}  // namespace gmmscore

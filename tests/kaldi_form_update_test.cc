// gmm-est's update and splitting in Kaldi's own parameters (train/kaldi_form_update): against a
// float64 reference of Kaldi's formulas, each parameter brought back as Kaldi's CopyToDiagGmm
// brings it (bit for bit), on a random model with 1 to 6 Gaussians per pdf, dimension 13, pdfs
// with too little data (removals, a pdf's last Gaussian kept), floors, partial update flags and
// splits with known draws.
#include "train/kaldi_form_update.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "model/random_model.h"

namespace gmmscore::testing {
namespace {

constexpr int32_t kDim = 13;

KaldiStoredModel ToStored(const GmmModel& model) {
  KaldiStoredModel stored;
  stored.has_gmms = true;
  stored.dim = model.dim();
  for (int32_t pdf = 0; pdf < model.num_states(); ++pdf) {
    const int32_t n = model.num_gauss_in(pdf);
    const uint32_t g0 = model.gauss_begin(pdf);
    KaldiStoredGmm gmm;
    gmm.means_invvars = Matrix(n, model.dim());
    gmm.inv_vars = Matrix(n, model.dim());
    for (int32_t g = 0; g < n; ++g) {
      gmm.weights.push_back(model.weight(g0 + g));
      for (int32_t d = 0; d < model.dim(); ++d) {
        ToKaldiParameters(model.mean(g0 + g)[d], model.variance(g0 + g)[d],
                          &gmm.means_invvars.at(g, d), &gmm.inv_vars.at(g, d));
      }
    }
    gmm.gconsts = *KaldiGconsts(gmm.weights, gmm.means_invvars, gmm.inv_vars);
    stored.pdfs.push_back(std::move(gmm));
  }
  return stored;
}

struct Fixture {
  GmmModel model;
  GmmStats stats;
};

// Statistics of frames drawn near each Gaussian; pdf 1 has too little data everywhere (its last
// Gaussian is kept), every pdf's Gaussian 1 where it has one gets 3 frames (removed), and one
// dimension of Gaussian 0 of pdf 2 has almost no spread (floored).
Fixture MakeFixture() {
  RandomModelOptions options;
  options.num_states = 6;
  options.dim = kDim;
  options.min_gauss = 1;
  options.max_gauss = 6;
  GmmModel model = RandomModel(options, 17);
  GmmStats stats = GmmStats::ForModel(model, kGmmAll);
  std::mt19937 rng(5);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> count(30.0, 400.0);
  for (int32_t pdf = 0; pdf < model.num_states(); ++pdf) {
    for (uint32_t g = model.gauss_begin(pdf); g < model.gauss_begin(pdf + 1); ++g) {
      const uint32_t local = g - model.gauss_begin(pdf);
      const double occ = pdf == 1 ? 2.0 + local : (local == 1 ? 3.0 : count(rng));
      stats.occupancy[g] = occ;
      for (int32_t d = 0; d < kDim; ++d) {
        const double mu = model.mean(g)[d] + 0.3 * normal(rng);
        double var = model.variance(g)[d] * (0.5 + std::abs(normal(rng)));
        if (pdf == 2 && local == 0 && d == 4) var = 1e-6;
        stats.first[g * kDim + d] = occ * mu;
        stats.second[g * kDim + d] = occ * (var + mu * mu);
      }
    }
  }
  return {std::move(model), std::move(stats)};
}

TEST(KaldiFormUpdate, EachParameterIsKaldisRoundingOfTheDoubleUpdate) {
  for (const uint16_t flags :
       {uint16_t(kGmmAll), uint16_t(kGmmMeans | kGmmWeights), uint16_t(kGmmVariances)}) {
    SCOPED_TRACE(GmmFlagsToString(flags));
    Fixture f = MakeFixture();
    const KaldiStoredModel before = ToStored(f.model);
    KaldiStoredModel after = before;
    MleOptions options;
    MleSummary summary;
    ASSERT_TRUE(MleUpdateKaldiForm(options, f.stats, flags, &after, &summary).ok());
    // The rules are MleUpdate's: the same removals, floors and warnings.
    MleSummary reference;
    auto updated = MleUpdate(options, f.stats, flags, f.model, &reference);
    ASSERT_TRUE(updated.ok()) << updated.status();
    EXPECT_EQ(after.NumGauss(), updated->num_gauss());
    EXPECT_EQ(summary.removed_gaussians, reference.removed_gaussians);
    EXPECT_GT(summary.removed_gaussians, 0);
    EXPECT_EQ(summary.floored_elements, reference.floored_elements);
    EXPECT_EQ(summary.warnings, reference.warnings);
    EXPECT_NEAR(summary.objective_change, reference.objective_change,
                1e-3 * std::abs(reference.objective_change) + 1.0);

    for (int32_t pdf = 0; pdf < f.model.num_states(); ++pdf) {
      SCOPED_TRACE(pdf);
      const KaldiStoredGmm& old = before.pdfs[size_t(pdf)];
      const KaldiStoredGmm& got = after.pdfs[size_t(pdf)];
      const uint32_t g0 = f.model.gauss_begin(pdf);
      const double occ_sum = f.stats.PdfOccupancy(pdf);
      // Kaldi's formulas in double, each result rounded as CopyToDiagGmm rounds it.
      int32_t out = 0;
      std::vector<float> weights;  // every Gaussian's, the removed ones' too
      std::vector<bool> removed;
      for (int32_t g = 0; g < old.num_gauss(); ++g) {
        const double occ = f.stats.occupancy[g0 + uint32_t(g)];
        const bool update = occ > options.min_gaussian_occupancy;
        removed.push_back(!update && (pdf != 1 || g < old.num_gauss() - 1));
        weights.push_back(
            (flags & kGmmWeights)
                ? static_cast<float>(update ? occ / occ_sum : std::max(occ / occ_sum, 1e-5))
                : old.weights[size_t(g)]);
        if (removed.back()) continue;
        for (int32_t d = 0; d < kDim; ++d) {
          const double old_var = 1.0 / double(old.inv_vars.at(g, d));
          const double old_mean = double(old.means_invvars.at(g, d)) * old_var;
          double mean = old_mean, var = old_var;
          if (update) {
            const size_t i = size_t(g0 + uint32_t(g)) * kDim + size_t(d);
            mean = f.stats.first[i] * (1.0 / occ);
            var = f.stats.second[i] * (1.0 / occ) - mean * mean;
            if (!(flags & kGmmMeans)) var += (old_mean - mean) * (old_mean - mean);
            var = std::max(var, options.min_variance);
          }
          const float iv =
              (flags & kGmmVariances) ? 1.0f / static_cast<float>(var) : old.inv_vars.at(g, d);
          const float miv = (flags & kGmmMeans)
                                ? static_cast<float>(mean) * iv
                                : ((flags & kGmmVariances) ? static_cast<float>(old_mean) * iv
                                                           : old.means_invvars.at(g, d));
          ASSERT_EQ(got.inv_vars.at(out, d), iv) << "Gaussian " << g << " dimension " << d;
          ASSERT_EQ(got.means_invvars.at(out, d), miv) << "Gaussian " << g << " dimension " << d;
        }
        ++out;
      }
      ASSERT_EQ(got.num_gauss(), out);
      // Removed one at a time, in order, each removal renormalising what is left in float,
      // whatever the flags.
      for (size_t g = 0, at = 0; g < removed.size(); ++g) {
        if (!removed[g]) {
          ++at;
          continue;
        }
        weights.erase(weights.begin() + ptrdiff_t(at));
        float sum = 0.0f;
        for (const float w : weights) sum += w;
        for (float& w : weights) w *= static_cast<float>(1.0 / sum);
      }
      EXPECT_EQ(got.weights, weights);
      EXPECT_EQ(got.gconsts, *KaldiGconsts(got.weights, got.means_invvars, got.inv_vars));
    }
  }
}

TEST(KaldiFormUpdate, RefusesStatisticsOfAnotherShape) {
  Fixture f = MakeFixture();
  KaldiStoredModel stored = ToStored(f.model);
  stored.pdfs.pop_back();
  MleSummary summary;
  const absl::Status status = MleUpdateKaldiForm(MleOptions(), f.stats, kGmmAll, &stored, &summary);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("pdfs"), std::string::npos) << status;
}

TEST(KaldiFormSplit, HeaviestFirstPerturbedInMeansTimesInverseVariances) {
  KaldiStoredModel model;
  model.has_gmms = true;
  model.dim = 3;
  KaldiStoredGmm gmm;
  gmm.weights = {0.7f, 0.3f};
  gmm.means_invvars = Matrix(2, 3);
  gmm.inv_vars = Matrix(2, 3);
  for (int32_t d = 0; d < 3; ++d) {
    gmm.means_invvars.at(0, d) = 0.5f + float(d);
    gmm.means_invvars.at(1, d) = -1.25f * float(d);
    gmm.inv_vars.at(0, d) = 2.0f + float(d);
    gmm.inv_vars.at(1, d) = 0.75f;
  }
  gmm.gconsts = *KaldiGconsts(gmm.weights, gmm.means_invvars, gmm.inv_vars);
  model.pdfs.push_back(gmm);
  const KaldiStoredGmm original = gmm;
  int draws = 0;
  const float perturb = 0.01f;
  ASSERT_TRUE(SplitKaldiForm(
                  {4}, perturb, [&] { return 0.5 + 0.25 * draws++; }, &model)
                  .ok());
  EXPECT_EQ(draws, 2 * 3);
  const KaldiStoredGmm& got = model.pdfs[0];
  // 0.7 splits into 0.35 + 0.35; then the first of the two 0.35s splits again.
  EXPECT_EQ(got.weights, (std::vector<float>{0.175f, 0.3f, 0.35f, 0.175f}));
  for (int32_t d = 0; d < 3; ++d) {
    const float z1 = float(0.5 + 0.25 * d) * std::sqrt(original.inv_vars.at(0, d));
    const float z2 = float(0.5 + 0.25 * (3 + d)) * std::sqrt(original.inv_vars.at(0, d));
    const float first = original.means_invvars.at(0, d) + -perturb * z1;
    EXPECT_EQ(got.means_invvars.at(2, d), original.means_invvars.at(0, d) + perturb * z1);
    EXPECT_EQ(got.means_invvars.at(0, d), first + -perturb * z2);
    EXPECT_EQ(got.means_invvars.at(3, d), first + perturb * z2);
    EXPECT_EQ(got.means_invvars.at(1, d), original.means_invvars.at(1, d));
    for (const int32_t g : {0, 2, 3}) EXPECT_EQ(got.inv_vars.at(g, d), original.inv_vars.at(0, d));
  }
  EXPECT_EQ(got.gconsts, *KaldiGconsts(got.weights, got.means_invvars, got.inv_vars));
}

TEST(KaldiFormMix, SplitsEachPdfToItsSplitTarget) {
  Fixture f = MakeFixture();
  KaldiStoredModel stored = ToStored(f.model);
  std::vector<float> occs;
  for (int32_t pdf = 0; pdf < f.model.num_states(); ++pdf) {
    occs.push_back(static_cast<float>(f.stats.PdfOccupancy(pdf)));
  }
  MixUpOptions up;
  up.target = int32_t(f.model.num_gauss()) + 20;
  std::mt19937 rng(3);
  std::normal_distribution<double> normal;
  auto mixed = MixKaldiForm(
      occs, MixDownOptions(), up, [&] { return normal(rng); }, &stored);
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  const std::vector<int32_t> targets = SplitTargets(occs, up.target, up.power, up.min_count);
  for (size_t pdf = 0; pdf < targets.size(); ++pdf) {
    EXPECT_EQ(stored.pdfs[pdf].num_gauss(),
              std::max(targets[pdf], f.model.num_gauss_in(int32_t(pdf))));
  }
  EXPECT_EQ(mixed->before_up, f.model.num_gauss());
  EXPECT_EQ(mixed->after_up, stored.NumGauss());
}

}  // namespace
}  // namespace gmmscore::testing

// fMLLR (train/fmllr) and the tools align_fmllr.sh's statistics go through: on synthetic data, a
// known affine distortion of frames drawn from a GMM is undone by the full update, each update
// type raises the objective and a count below min-count leaves the identity; posteriors from
// alignments, silence weighting (both ways) and per-pdf gathering (align/posteriors); and
// ali-to-post | weight-silence-post | gmm-est-fmllr under their Kaldi names on what real Kaldi
// made (tests/data/kaldi-tri-fmllr): Kaldi's transforms per speaker (full) and per utterance
// (diag) to float rounding, and Kaldi's auxf improvements in the log.
#include "train/fmllr.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>

#include "align/posteriors.h"
#include "formats/kaldi_model.h"
#include "formats/kaldi_model_copy.h"
#include "model/kaldi_stored_model.h"
#include "tests/test_util.h"

namespace gmmscore::testing {
namespace {

constexpr int32_t kDim = 3;

// One pdf of two Gaussians, unit variances around (+2, ...) and (-2, ...).
KaldiStoredGmm TwoGaussians() {
  KaldiStoredGmm gmm;
  gmm.weights = {0.5f, 0.5f};
  gmm.means_invvars = Matrix(2, kDim);
  gmm.inv_vars = Matrix(2, kDim);
  for (int32_t d = 0; d < kDim; ++d) {
    gmm.means_invvars.at(0, d) = 2.0f;
    gmm.means_invvars.at(1, d) = -2.0f;
    gmm.inv_vars.at(0, d) = gmm.inv_vars.at(1, d) = 1.0f;
  }
  gmm.gconsts = *KaldiGconsts(gmm.weights, gmm.means_invvars, gmm.inv_vars);
  return gmm;
}

// Frames of the GMM seen through y = M x + c; the transform that undoes it is [M^-1, -M^-1 c].
FmllrStats DistortedStats(int32_t frames) {
  const KaldiStoredGmm gmm = TwoGaussians();
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  FmllrStats stats(kDim);
  const float m[kDim] = {1.5f, 0.8f, 2.0f}, c[kDim] = {0.5f, -1.0f, 0.25f};
  for (int32_t t = 0; t < frames; ++t) {
    const float mean = (t % 2 == 0) ? 2.0f : -2.0f;
    float y[kDim];
    for (int32_t d = 0; d < kDim; ++d) y[d] = m[d] * (mean + normal(rng)) + c[d];
    stats.AccumulateForGmm(gmm, y, 1.0f);
  }
  return stats;
}

TEST(Fmllr, FullUpdateUndoesAKnownDistortion) {
  FmllrStats stats = DistortedStats(4000);
  FmllrOptions options;
  options.min_count = 100.0;
  const FmllrEstimate estimate = EstimateFmllr(options, stats);
  ASSERT_TRUE(estimate.warnings.empty()) << estimate.warnings[0];
  EXPECT_NEAR(estimate.count, 4000.0, 1e-3);
  EXPECT_GT(estimate.objective_change, 0.0);
  const float m[kDim] = {1.5f, 0.8f, 2.0f}, c[kDim] = {0.5f, -1.0f, 0.25f};
  for (int32_t i = 0; i < kDim; ++i) {
    for (int32_t j = 0; j < kDim; ++j) {
      EXPECT_NEAR(estimate.transform.at(i, j), i == j ? 1.0f / m[i] : 0.0f, 0.05) << i << j;
    }
    EXPECT_NEAR(estimate.transform.at(i, kDim), -c[i] / m[i], 0.1) << i;
  }
  // The objective is higher at the estimate than at the identity, by the change reported.
  Matrix identity(kDim, kDim + 1);
  for (int32_t i = 0; i < kDim; ++i) identity.at(i, i) = 1.0f;
  EXPECT_NEAR(FmllrObjective(estimate.transform, stats) - FmllrObjective(identity, stats),
              estimate.objective_change, 1e-3 * estimate.objective_change);
}

TEST(Fmllr, EachUpdateTypeRaisesTheObjectiveAndFewFramesKeepTheIdentity) {
  for (const auto update : {FmllrOptions::Update::kDiag, FmllrOptions::Update::kOffset}) {
    FmllrStats stats = DistortedStats(2000);
    FmllrOptions options;
    options.update = update;
    options.min_count = 0.0;
    const FmllrEstimate estimate = EstimateFmllr(options, stats);
    EXPECT_GT(estimate.objective_change, 0.0);
    for (int32_t i = 0; i < kDim; ++i) {
      for (int32_t j = 0; j < kDim; ++j) {
        if (i != j) {
          EXPECT_EQ(estimate.transform.at(i, j), 0.0f);
        }
        if (i == j && update == FmllrOptions::Update::kOffset) {
          EXPECT_EQ(estimate.transform.at(i, j), 1.0f);
        }
      }
    }
  }
  FmllrStats few = DistortedStats(50);
  const FmllrEstimate kept = EstimateFmllr(FmllrOptions(), few);  // min_count 500
  ASSERT_EQ(kept.warnings.size(), 1u);
  EXPECT_NE(kept.warnings[0].find("Not updating fMLLR since below min-count: count is 50"),
            std::string::npos)
      << kept.warnings[0];
  EXPECT_EQ(kept.objective_change, 0.0);
  EXPECT_EQ(kept.transform.at(1, 1), 1.0f);
  EXPECT_EQ(kept.transform.at(1, kDim), 0.0f);
  EXPECT_FALSE(ParseFmllrUpdate("diagonal").ok());
}

std::string Data(const std::string& name) { return DataPath(name); }

class FmllrToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(
        RunCommand(std::string(GMMSCORE_CLI) + " kaldi-links " + dir_.file("bin") + " >/dev/null",
                   log()),
        0)
        << ReadFile(log());
    // The speaker-independent features and the silence-free posteriors, as align_fmllr.sh
    // makes them.
    ASSERT_EQ(RunCommand(Tool("apply-cmvn") + " --utt2spk=ark:" + Data("kaldi-tri-feats/utt2spk") +
                             " ark:" + Data("kaldi-tri-feats/cmvn.ark") +
                             " ark:" + Data("kaldi-tri-feats/feats.ark") + " ark:- | " +
                             Tool("splice-feats") + " --left-context=3 --right-context=3 " +
                             "ark:- ark:- | " + Tool("transform-feats") + " " +
                             Data("kaldi-tri-feats/final.mat") + " ark:- ark:" + file("si.ark"),
                         log()),
              0)
        << ReadFile(log());
    ASSERT_EQ(
        RunCommand(Tool("ali-to-post") + " ark:" + Data("kaldi-tri-fmllr/ali_tri3b.ark") +
                       " ark:- | " + Tool("weight-silence-post") + " 0.0 1:2:3:4:5:6:7:8:9:10 " +
                       Model() + " ark:- ark:" + file("post.ark"),
                   log()),
        0)
        << ReadFile(log());
    EXPECT_NE(ReadFile(log()).find("LOG (weight-silence-post) Done 102 posteriors."),
              std::string::npos)
        << ReadFile(log());
  }
  std::string Tool(const std::string& name) const {
    return dir_.file("bin/" + name) + " --print-args=false";
  }
  std::string Model() const { return Data("kaldi-tri-fmllr/final.mdl"); }
  std::string file(const std::string& name) const { return dir_.file(name); }
  std::string log() const { return dir_.file("log"); }

  void ExpectKaldis(const std::string& got_path, const std::string& kaldi_name, double tolerance,
                    size_t count) {
    const auto got = ReadTable("ark:" + got_path), kaldi = ReadTable("ark:" + Data(kaldi_name));
    ASSERT_EQ(kaldi.size(), count);
    ASSERT_EQ(got.size(), count);
    for (const auto& [key, want] : kaldi) {
      ASSERT_TRUE(got.count(key)) << key;
      ASSERT_EQ(got.at(key).rows, 40);
      ASSERT_EQ(got.at(key).cols, 41);
      for (size_t i = 0; i < want.data.size(); ++i) {
        ASSERT_NEAR(got.at(key).data[i], want.data[i], tolerance) << key << " value " << i;
      }
    }
  }

  TempDir dir_;
};

TEST_F(FmllrToolsTest, PerSpeakerFullTransformsAreKaldis) {
  ASSERT_EQ(
      RunCommand(Tool("gmm-est-fmllr") + " --fmllr-update-type=full --spk2utt=ark:" +
                     Data("kaldi-tri-feats/spk2utt") + " " + Model() + " ark:" + file("si.ark") +
                     " ark:" + file("post.ark") + " ark:" + file("trans.ark"),
                 log()),
      0)
      << ReadFile(log());
  const std::string text = ReadFile(log());
  EXPECT_NE(text.find("Done 102 files, 0 with no posts, 0 with other errors."), std::string::npos)
      << text;
  EXPECT_NE(text.find("Overall fMLLR auxf impr per frame is 19.8248 over 24814 frames."),
            std::string::npos)
      << text;
  // Measured: within 7.4e-7 of Kaldi's.
  ExpectKaldis(file("trans.ark"), "kaldi-tri-fmllr/fmllr_est_spk.ark", 1e-5, 3);
}

TEST_F(FmllrToolsTest, PerUtteranceDiagonalTransformsAreKaldis) {
  ASSERT_EQ(RunCommand(Tool("gmm-est-fmllr") + " --fmllr-update-type=diag --fmllr-min-count=0 " +
                           Model() + " ark:" + file("si.ark") + " ark:" + file("post.ark") +
                           " ark:" + file("trans.ark"),
                       log()),
            0)
      << ReadFile(log());
  EXPECT_NE(ReadFile(log()).find("Overall fMLLR auxf impr per frame is 6.5428"), std::string::npos)
      << ReadFile(log());
  // Measured: within 1.7e-5 of Kaldi's (scales near 1, offsets up to ~10).
  ExpectKaldis(file("trans.ark"), "kaldi-tri-fmllr/fmllr_est_utt_diag.ark", 1e-4, 102);
}

// align_fmllr.sh's transforms: the first pass's alignments under the speaker-independent model,
// silence weighted, made into Gaussian posteriors under that model (gmm-post-to-gpost) and into
// per-speaker transforms of the SAT model (gmm-est-fmllr-gpost): Kaldi's trans.* to float
// rounding, through binary and text GaussPost tables alike.
TEST_F(FmllrToolsTest, AlignFmllrTransformsFromGaussianPosteriorsAreKaldis) {
  const std::string alimdl = Data("kaldi-tri-fmllr/final.alimdl");
  ASSERT_EQ(
      RunCommand(Tool("ali-to-post") + " ark:" + Data("kaldi-tri-fmllr/ali_tri3b_pass1.ark") +
                     " ark:- | " + Tool("weight-silence-post") + " 0.0 1:2:3:4:5:6:7:8:9:10 " +
                     alimdl + " ark:- ark:- | " + Tool("gmm-post-to-gpost") + " " + alimdl +
                     " ark:" + file("si.ark") + " ark:- ark:" + file("gpost.ark"),
                 log()),
      0)
      << ReadFile(log());
  EXPECT_NE(ReadFile(log()).find("LOG (gmm-post-to-gpost) Done 102 files, 0 with no posteriors, 0 "
                                 "with other errors."),
            std::string::npos)
      << ReadFile(log());
  EXPECT_NE(ReadFile(log()).find("over 24808 frames."), std::string::npos) << ReadFile(log());
  for (const std::string& gpost : {"ark:" + file("gpost.ark"), "ark:" + file("gpost.txt")}) {
    if (gpost.find(".txt") != std::string::npos) {
      // The same posteriors as text, read back.
      ASSERT_EQ(RunCommand(Tool("gmm-post-to-gpost") + " " + alimdl + " ark:" + file("si.ark") +
                               " 'ark:" + Tool("ali-to-post") +
                               " ark:" + Data("kaldi-tri-fmllr/ali_tri3b_pass1.ark") + " ark:- | " +
                               Tool("weight-silence-post") + " 0.0 1:2:3:4:5:6:7:8:9:10 " + alimdl +
                               " ark:- ark:- |' ark,t:" + file("gpost.txt"),
                           log()),
                0)
          << ReadFile(log());
    }
    ASSERT_EQ(
        RunCommand(Tool("gmm-est-fmllr-gpost") + " --fmllr-update-type=full --spk2utt=ark:" +
                       Data("kaldi-tri-feats/spk2utt") + " " + Model() + " ark:" + file("si.ark") +
                       " ark,s,cs:" + gpost.substr(4) + " ark:" + file("trans.ark"),
                   log()),
        0)
        << ReadFile(log());
    const std::string text = ReadFile(log());
    EXPECT_NE(text.find("Done 102 files, 0 with no gposts, 0 with other errors."),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("For speaker fslt, auxf-impr from fMLLR is 36.859, over 7955 frames.\n"),
              std::string::npos)
        << text;
    // Measured: within 3.2e-7 of Kaldi's.
    ExpectKaldis(file("trans.ark"), "kaldi-tri-feats/trans_tri3b.ark", 1e-5, 3);
  }
}

// gmm-post-to-gpost's posteriors: each (pdf, weight) gives the pdf's Gaussians' posteriors for
// the frame, summing to the weight, against a float64 softmax of the Gaussians' log-likelihoods;
// frames of weight 0 have none; --rand-prune keeps a small posterior at the threshold or drops it.
TEST(GaussPosteriors, AreEachPdfsGaussiansPosteriorsTimesItsWeight) {
  auto model = ReadKaldiStoredModel(DataPath("kaldi-tri-fmllr/final.alimdl"), true, true);
  ASSERT_TRUE(model.ok()) << model.status();
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  Matrix feats(4, model->dim);
  for (float& x : feats.data) x = 3.0f * normal(rng);
  const int32_t tid = 300, tid2 = 301, sil = 1;
  ASSERT_NE(model->hmm->TransitionIdToPdf(tid), model->hmm->TransitionIdToPdf(tid2));
  const Posterior posterior = {{{tid, 1.0f}}, {{tid, 0.25f}, {tid2, 0.75f}}, {}, {{sil, 0.0f}}};
  KaldiRandom random;
  float like = 0.0f, weight = 0.0f;
  auto gpost = ToGaussPosteriors(*model, feats, posterior, 0.0f, &random, &like, &weight);
  ASSERT_TRUE(gpost.ok()) << gpost.status();
  ASSERT_EQ(gpost->size(), 4u);
  EXPECT_EQ(weight, 2.0f);
  EXPECT_EQ((*gpost)[1].size(), 2u);
  EXPECT_TRUE((*gpost)[2].empty());
  EXPECT_TRUE((*gpost)[3].empty());
  double like_reference = 0.0;
  for (int32_t t = 0; t < 2; ++t) {
    for (const auto& [pdf, posteriors] : (*gpost)[size_t(t)]) {
      const KaldiStoredGmm& gmm = model->pdfs[size_t(pdf)];
      ASSERT_EQ(posteriors.size(), size_t(gmm.num_gauss()));
      std::vector<double> loglikes(posteriors.size());
      for (int32_t g = 0; g < gmm.num_gauss(); ++g) {
        double l = gmm.gconsts[size_t(g)];
        for (int32_t d = 0; d < model->dim; ++d) {
          const double x = feats.at(t, d);
          l += gmm.means_invvars.at(g, d) * x - 0.5 * gmm.inv_vars.at(g, d) * x * x;
        }
        loglikes[size_t(g)] = l;
      }
      const double max = *std::max_element(loglikes.begin(), loglikes.end());
      double sum = 0.0;
      for (const double l : loglikes) sum += std::exp(l - max);
      const float w = t == 0 ? 1.0f : (model->hmm->TransitionIdToPdf(tid) == pdf ? 0.25f : 0.75f);
      like_reference += w * (max + std::log(sum));
      double total = 0.0;
      for (int32_t g = 0; g < gmm.num_gauss(); ++g) {
        EXPECT_NEAR(posteriors[size_t(g)], w * std::exp(loglikes[size_t(g)] - max) / sum, 1e-5)
            << "frame " << t << " pdf " << pdf << " Gaussian " << g;
        total += posteriors[size_t(g)];
      }
      EXPECT_NEAR(total, w, 1e-5);
    }
  }
  EXPECT_NEAR(like, like_reference, 1e-3 * std::abs(like_reference));

  // Pruned at 0.5: a posterior below it becomes 0.5 or 0.
  auto pruned = ToGaussPosteriors(*model, feats, posterior, 0.5f, &random, &like, &weight);
  ASSERT_TRUE(pruned.ok());
  for (const auto& frame : *pruned) {
    for (const auto& [pdf, posteriors] : frame) {
      for (const float p : posteriors) EXPECT_TRUE(p == 0.0f || p == 0.5f || p >= 0.5f) << p;
    }
  }
  // A posterior of another length than the features, a transition-id beyond the model.
  EXPECT_FALSE(
      ToGaussPosteriors(*model, feats, {{{tid, 1.0f}}}, 0.0f, &random, &like, &weight).ok());
  const Posterior bad = {{{tid, 1.0f}}, {{100000, 1.0f}}, {}, {}};
  const auto refused = ToGaussPosteriors(*model, feats, bad, 0.0f, &random, &like, &weight);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("transition-id 100000 is not in the model"),
            absl::string_view::npos)
      << refused.status();
}

// gmmscore align --fmllr: align_fmllr.sh's two passes in one command (tools/align_fmllr.h), on
// the graphs compile-train-graphs makes from tri3b's tree: Kaldi's final alignments byte for
// byte, and its transforms to float rounding.
TEST_F(FmllrToolsTest, AlignFmllrInOneCommandGivesKaldisAlignments) {
  ASSERT_EQ(
      RunCommand(Tool("compile-train-graphs") + " --read-disambig-syms=" +
                     Data("kaldi-tri-graphs/disambig.int") + " " + Data("kaldi-tri-fmllr/tree") +
                     " " + Model() + " " + Data("kaldi-tri-graphs/L.fst") +
                     " ark:" + Data("kaldi-tri-fmllr/text.int") + " ark:" + file("graphs.fsts"),
                 log()),
      0)
      << ReadFile(log());
  const std::string align = std::string(GMMSCORE_CLI) +
                            " align --transition-scale=1.0 --acoustic-scale=0.1 "
                            "--self-loop-scale=0.1 --beam=10 --retry-beam=40 --fmllr "
                            "--silence-phones=1:2:3:4:5:6:7:8:9:10 --spk2utt=ark:" +
                            Data("kaldi-tri-feats/spk2utt") + " ";
  ASSERT_EQ(RunCommand(align + "--alignment-model=" + Data("kaldi-tri-fmllr/final.alimdl") +
                           " --write-transforms=ark:" + file("trans.ark") + " " + Model() +
                           " ark:" + file("graphs.fsts") + " ark:" + file("si.ark") +
                           " ark:" + file("ali.ark"),
                       log()),
            0)
      << ReadFile(log());
  EXPECT_EQ(ReadFile(file("ali.ark")), ReadFile(Data("kaldi-tri-fmllr/ali_tri3b.ark")));
  ExpectKaldis(file("trans.ark"), "kaldi-tri-feats/trans_tri3b.ark", 1e-5, 3);
  const std::string text = ReadFile(log());
  EXPECT_NE(text.find("Overall fMLLR auxf impr per frame is 33.1147 over 24808 frames."),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Done 102, errors on 0"), std::string::npos) << text;
  // No speakers, a model of other pdfs for the first pass, --server with --fmllr: errors.
  EXPECT_EQ(RunCommand(std::string(GMMSCORE_CLI) + " align --fmllr " + Model() + " ark:" +
                           file("graphs.fsts") + " ark:" + file("si.ark") + " ark:/dev/null",
                       log()),
            255);
  EXPECT_NE(ReadFile(log()).find("--fmllr needs --spk2utt"), std::string::npos) << ReadFile(log());
  EXPECT_EQ(
      RunCommand(align + "--alignment-model=" + DataPath("kaldi-mono/final.mdl") + " " + Model() +
                     " ark:" + file("graphs.fsts") + " ark:" + file("si.ark") + " ark:/dev/null",
                 log()),
      255);
  EXPECT_NE(ReadFile(log()).find("the alignment model has"), std::string::npos) << ReadFile(log());
}

TEST_F(FmllrToolsTest, BadInputsAreErrors) {
  // An unknown update type, an unopenable output, posteriors for another model.
  EXPECT_EQ(RunCommand(Tool("gmm-est-fmllr") + " --fmllr-update-type=diagonal " + Model() +
                           " ark:" + file("si.ark") + " ark:" + file("post.ark") + " ark:/dev/null",
                       log()),
            255);
  EXPECT_NE(ReadFile(log()).find("Unknown fMLLR update type diagonal"), std::string::npos);
  EXPECT_EQ(RunCommand(Tool("gmm-est-fmllr") + " " + Model() + " ark:" + file("si.ark") +
                           " ark:" + file("post.ark") + " ark:" + file("no/such/dir/t.ark"),
                       log()),
            255);
  EXPECT_EQ(RunCommand(Tool("weight-silence-post") + " 0.0 1:x " + Model() +
                           " ark:" + file("post.ark") + " ark:/dev/null",
                       log()),
            255);
  EXPECT_NE(ReadFile(log()).find("Invalid silence-phones string 1:x"), std::string::npos);
  EXPECT_EQ(
      RunCommand(Tool("ali-to-post") + " ark:" + file("missing.ark") + " ark:/dev/null", log()),
      255);
}

TEST(Posteriors, FromAlignmentsSilenceWeightedAndByPdf) {
  auto model = ReadKaldiTransitionModelFile(Data("kaldi-tri-fmllr/final.mdl"));
  ASSERT_TRUE(model.ok()) << model.status();
  // A transition-id of phone 1 (silence) and two of one other phone, sharing a pdf or not.
  int32_t sil = 0, other = 0, other2 = 0;
  for (int32_t tid = 1; tid <= model->NumTransitionIds(); ++tid) {
    if (model->TransitionIdToPhone(tid) == 1 && sil == 0) sil = tid;
    if (model->TransitionIdToPhone(tid) == 20 && other == 0) other = tid;
  }
  for (int32_t tid = other + 1; tid <= model->NumTransitionIds(); ++tid) {
    if (model->TransitionIdToPdf(tid) == model->TransitionIdToPdf(other)) other2 = tid;
  }
  ASSERT_GT(sil, 0);
  ASSERT_GT(other, 0);
  ASSERT_GT(other2, 0);
  const Posterior aligned = AlignmentToPosterior({sil, other});
  ASSERT_EQ(aligned.size(), 2u);
  EXPECT_EQ(aligned[0], (FramePosterior{{sil, 1.0f}}));

  const Posterior mixed = {{{sil, 0.25f}, {other, 0.75f}}, {{sil, 1.0f}}};
  Posterior dropped = mixed;
  WeightSilencePosterior(*model, {1}, 0.0f, false, &dropped);
  EXPECT_EQ(dropped[0], (FramePosterior{{other, 0.75f}}));
  EXPECT_TRUE(dropped[1].empty());
  Posterior halved = mixed;
  WeightSilencePosterior(*model, {1}, 0.5f, false, &halved);
  EXPECT_EQ(halved[0], (FramePosterior{{sil, 0.125f}, {other, 0.75f}}));
  Posterior distributed = mixed;
  WeightSilencePosterior(*model, {1}, 0.0f, true, &distributed);
  // Frame 0 scaled by (0.25 x 0 + 0.75) / 1; frame 1, all silence, emptied.
  EXPECT_EQ(distributed[0], (FramePosterior{{sil, 0.25f * 0.75f}, {other, 0.75f * 0.75f}}));
  EXPECT_TRUE(distributed[1].empty());

  // Weights summed per pdf in float; Kaldi's order (its unordered_map's: here the pdf met last
  // first); a pdf whose weights sum to 0 left out.
  const Posterior by_pdf = PosteriorToPdfs(
      *model, {{{other2, 0.5f}, {sil, 0.2f}, {other, 0.3f}}, {{sil, 0.5f}, {sil, -0.5f}}});
  const int32_t pdf = model->TransitionIdToPdf(other), sil_pdf = model->TransitionIdToPdf(sil);
  ASSERT_EQ(model->TransitionIdToPdf(other2), pdf);
  ASSERT_EQ(by_pdf.size(), 2u);
  ASSERT_EQ(by_pdf[0].size(), 2u);
  EXPECT_EQ(by_pdf[0][0], std::make_pair(sil_pdf, 0.2f));
  EXPECT_EQ(by_pdf[0][1], std::make_pair(pdf, 0.5f + 0.3f));
  EXPECT_TRUE(by_pdf[1].empty());
}

}  // namespace
}  // namespace gmmscore::testing

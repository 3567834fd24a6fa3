// MAP adaptation (train/map_update, formats/kaldi_am_table, gmmscore adapt): MapUpdate against a
// long double computation of gmm-adapt-map's rules written here from the same statistics, on a
// random model with 1 to 7 Gaussians per pdf in dimension 11, for every combination of update
// flags; tau = 0 giving the ML estimate, a huge tau keeping the prior, unseen Gaussians and pdfs
// keeping their parameters; the AmDiagGmm table holding exactly what a model file holds after its
// transition model; and the command on the real Kaldi data per utterance and per speaker, its
// table read back and checked against MapUpdate called directly, and its errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "formats/kaldi_am_table.h"
#include "formats/kaldi_model.h"
#include "formats/matrix_table.h"
#include "model/gmm_stats.h"
#include "model/random_model.h"
#include "tests/test_util.h"
#include "train/accumulate.h"
#include "train/map_update.h"
#include "train/mle_update.h"

namespace gmmscore {
namespace {

using testing::DataPath;
using testing::ReadFile;
using testing::RunCommand;
using testing::TempDir;
using testing::WriteFile;

constexpr uint16_t kMvw = kGmmMeans | kGmmVariances | kGmmWeights;

// A prior and a "speaker's" statistics: frames drawn around the prior's Gaussians, shifted and
// spread wider so that adaptation has somewhere to go. Pdf 0 sees no frame and the first
// Gaussian of the first seen pdf with more than one Gaussian is given no count.
struct Case {
  GmmModel prior;
  GmmStats stats;
  uint32_t unseen_gauss = 0;
};

Case MakeCase(uint32_t seed) {
  RandomModelOptions options;
  options.num_states = 9;
  options.dim = 11;
  options.min_gauss = 1;
  options.max_gauss = 7;
  Case c{RandomModel(options, seed), {}, 0};
  const GmmModel& prior = c.prior;
  c.stats = GmmStats::ForModel(prior, kMvw);
  const GmmAccumulator accumulator(prior);
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> posteriors(size_t(prior.max_gauss_per_state()));
  std::vector<float> frame(size_t(prior.dim()));
  for (int32_t t = 0; t < 3000; ++t) {
    const int32_t pdf = 1 + int32_t(rng() % uint32_t(prior.num_states() - 1));
    const uint32_t g = prior.gauss_begin(pdf) + uint32_t(rng() % uint32_t(prior.num_gauss_in(pdf)));
    for (int32_t d = 0; d < prior.dim(); ++d) {
      frame[size_t(d)] = static_cast<float>(prior.mean(g)[d] + 0.7 +
                                            1.5 * std::sqrt(prior.variance(g)[d]) * normal(rng));
    }
    EXPECT_TRUE(accumulator.PdfPosteriors(pdf, frame.data(), posteriors.data()).ok());
    GmmAccumulator::AddFrame(pdf, frame.data(), posteriors.data(), 1.0, &c.stats);
  }
  for (int32_t pdf = 1; pdf < prior.num_states(); ++pdf) {
    if (prior.num_gauss_in(pdf) < 2) continue;
    c.unseen_gauss = prior.gauss_begin(pdf);
    break;
  }
  EXPECT_NE(c.unseen_gauss, 0u);
  const size_t g = c.unseen_gauss, dim = size_t(prior.dim());
  c.stats.occupancy[g] = 0.0;
  for (size_t d = 0; d < dim; ++d) c.stats.first[g * dim + d] = c.stats.second[g * dim + d] = 0.0;
  return c;
}

// The statistics with only what `flags` need kept (as the command accumulates them).
GmmStats Restrict(const GmmStats& full, uint16_t flags) {
  GmmStats s = full;
  s.flags = AugmentGmmFlags(flags);
  if (!(s.flags & kGmmMeans)) s.first.clear();
  if (!(s.flags & kGmmVariances)) s.second.clear();
  return s;
}

// ---- gmm-adapt-map's rules in long double, written from Kaldi's description: per pdf with
// total count c, w' = (c_g + tw w) / (c + tw); where c_g > 0, mu' = (F + tm mu) / (c_g + tm) and
// var' = (S - 2 m F + c_g m^2 + tv var) / (c_g + tv) about m = mu' (or mu without 'm').
struct RefGmm {
  std::vector<long double> weights, means, vars;
};

RefGmm ReferenceMap(const GmmModel& prior, const GmmStats& full, const MapOptions& o,
                    uint16_t flags) {
  const int32_t dim = prior.dim();
  RefGmm ref;
  for (int32_t pdf = 0; pdf < prior.num_states(); ++pdf) {
    long double count = 0;
    for (uint32_t g = prior.gauss_begin(pdf); g < prior.gauss_end(pdf); ++g) {
      count += full.occupancy[g];
    }
    for (uint32_t g = prior.gauss_begin(pdf); g < prior.gauss_end(pdf); ++g) {
      const long double occ = full.occupancy[g];
      long double w = prior.weight(g);
      if ((flags & kGmmWeights) && count + o.weight_tau > 0) {
        w = (occ + o.weight_tau * w) / (count + o.weight_tau);
      }
      ref.weights.push_back(w);
      for (int32_t d = 0; d < dim; ++d) {
        const size_t i = size_t(g) * dim + d;
        long double m = prior.mean(g)[d], v = prior.variance(g)[d];
        if (occ > 0 && (flags & kGmmMeans)) {
          m = (full.first[i] + o.mean_tau * m) / (occ + o.mean_tau);
        }
        if (occ > 0 && (flags & kGmmVariances)) {
          v = (full.second[i] - 2 * m * full.first[i] + occ * m * m + o.variance_tau * v) /
              (occ + o.variance_tau);
        }
        ref.means.push_back(m);
        ref.vars.push_back(v);
      }
    }
  }
  return ref;
}

// sum_g c_g log w_g N(.; g) of the statistics, in long double, from the model's float parameters.
long double LogLikelihood(const GmmModel& model, const GmmStats& full) {
  const int32_t dim = model.dim();
  const long double log_2pi = std::log(2.0L * 3.14159265358979323846264338327950288L);
  long double total = 0;
  for (int64_t g = 0; g < model.num_gauss(); ++g) {
    const long double occ = full.occupancy[size_t(g)];
    if (occ == 0) continue;
    long double sum = occ * (std::log((long double)model.weight(g)) - 0.5L * dim * log_2pi);
    for (int32_t d = 0; d < dim; ++d) {
      const size_t i = size_t(g) * dim + d;
      const long double mu = model.mean(g)[d], var = model.variance(g)[d];
      sum -= 0.5L * (occ * std::log(var) +
                     (full.second[i] - 2 * mu * full.first[i] + occ * mu * mu) / var);
    }
    total += sum;
  }
  return total;
}

void ExpectMatches(const GmmModel& adapted, const RefGmm& ref) {
  ASSERT_EQ(size_t(adapted.num_gauss()), ref.weights.size());
  const int32_t dim = adapted.dim();
  for (int64_t g = 0; g < adapted.num_gauss(); ++g) {
    const long double w = ref.weights[size_t(g)];
    EXPECT_NEAR(adapted.weight(g), double(w), 2e-7 * double(w)) << "Gaussian " << g;
    for (int32_t d = 0; d < dim; ++d) {
      const double m = double(ref.means[size_t(g) * dim + d]);
      const double v = double(ref.vars[size_t(g) * dim + d]);
      EXPECT_NEAR(adapted.mean(g)[d], m, 2e-7 * std::max(std::abs(m), std::sqrt(v)))
          << "Gaussian " << g << " dimension " << d;
      EXPECT_NEAR(adapted.variance(g)[d], v, 2e-7 * v) << "Gaussian " << g << " dimension " << d;
    }
  }
}

TEST(MapTest, MatchesFloat64ReferenceForEveryFlagCombination) {
  const Case c = MakeCase(3);
  const MapOptions settings[] = {MapOptions{},
                                 {.mean_tau = 0.5, .variance_tau = 2, .weight_tau = 3},
                                 {.mean_tau = 200, .variance_tau = 1, .weight_tau = 0}};
  for (const MapOptions& options : settings) {
    for (uint16_t flags = 1; flags <= kMvw; ++flags) {
      SCOPED_TRACE("flags " + GmmFlagsToString(flags) + ", tau " +
                   std::to_string(options.mean_tau));
      const GmmStats stats = Restrict(c.stats, flags);
      MapSummary summary;
      auto adapted = MapUpdate(options, stats, flags, c.prior, &summary);
      ASSERT_TRUE(adapted.ok()) << adapted.status();
      ExpectMatches(*adapted, ReferenceMap(c.prior, c.stats, options, flags));
      EXPECT_NEAR(summary.count, c.stats.TotalOccupancy(), 1e-9);
      if (flags & kGmmVariances) {  // the full log-likelihood needs the second-order statistics
        const long double change =
            LogLikelihood(*adapted, c.stats) - LogLikelihood(c.prior, c.stats);
        EXPECT_NEAR(summary.objective_change, double(change),
                    1e-9 * std::abs(double(LogLikelihood(c.prior, c.stats))));
      }
    }
  }
}

TEST(MapTest, ZeroTauIsTheMlEstimate) {
  const Case c = MakeCase(5);
  MleOptions keep;  // no thresholds, floors or removals: the plain ML estimate
  keep.min_gaussian_occupancy = 0.0;
  keep.min_gaussian_weight = 0.0;
  keep.min_variance = 1e-30;
  keep.remove_low_count_gaussians = false;
  auto ml = MleUpdate(keep, c.stats, kMvw, c.prior, nullptr);
  auto map = MapUpdate({.mean_tau = 0, .variance_tau = 0, .weight_tau = 0}, c.stats, kMvw, c.prior,
                       nullptr);
  ASSERT_TRUE(ml.ok() && map.ok()) << ml.status() << map.status();
  // Pdf 0 has no count: ML gives it 1/G weights, MAP keeps the prior's (and 0/0 is not taken).
  for (uint32_t g = c.prior.gauss_begin(0); g < c.prior.gauss_end(0); ++g) {
    EXPECT_EQ(map->weight(g), c.prior.weight(g));
  }
  for (int64_t g = c.prior.gauss_end(0); g < c.prior.num_gauss(); ++g) {
    EXPECT_FLOAT_EQ(map->weight(g), ml->weight(g)) << "Gaussian " << g;
    for (int32_t d = 0; d < c.prior.dim(); ++d) {
      EXPECT_EQ(map->mean(g)[d], ml->mean(g)[d]) << "Gaussian " << g << " dimension " << d;
      EXPECT_NEAR(map->variance(g)[d], ml->variance(g)[d], 1e-6 * ml->variance(g)[d])
          << "Gaussian " << g << " dimension " << d;
    }
  }
  EXPECT_EQ(map->weight(c.unseen_gauss), 0.0f);
}

TEST(MapTest, HugeTauKeepsThePrior) {
  const Case c = MakeCase(7);
  MapSummary summary;
  auto map = MapUpdate({.mean_tau = 1e15, .variance_tau = 1e15, .weight_tau = 1e15}, c.stats, kMvw,
                       c.prior, &summary);
  ASSERT_TRUE(map.ok()) << map.status();
  for (int64_t g = 0; g < c.prior.num_gauss(); ++g) {
    EXPECT_FLOAT_EQ(map->weight(g), c.prior.weight(g));
    for (int32_t d = 0; d < c.prior.dim(); ++d) {
      EXPECT_FLOAT_EQ(map->mean(g)[d], c.prior.mean(g)[d]);
      EXPECT_FLOAT_EQ(map->variance(g)[d], c.prior.variance(g)[d]);
    }
  }
  EXPECT_NEAR(summary.objective_change, 0.0, 1e-6);
}

TEST(MapTest, OnlyFlaggedParametersChange) {
  const Case c = MakeCase(9);
  for (uint16_t flags = 0; flags <= kMvw; ++flags) {
    SCOPED_TRACE("flags '" + GmmFlagsToString(flags) + "'");
    MapSummary summary;
    auto map = MapUpdate(MapOptions{}, c.stats, flags, c.prior, &summary);
    ASSERT_TRUE(map.ok()) << map.status();
    EXPECT_EQ(map->spec().weights != c.prior.spec().weights, (flags & kGmmWeights) != 0);
    EXPECT_EQ(map->spec().means != c.prior.spec().means, (flags & kGmmMeans) != 0);
    EXPECT_EQ(map->spec().variances != c.prior.spec().variances, (flags & kGmmVariances) != 0);
    if (flags == 0) {
      EXPECT_EQ(summary.objective_change, 0.0);
    }
    // The HMM (none here) and the Gaussian layout are the prior's.
    EXPECT_EQ(map->spec().gauss_begin, c.prior.spec().gauss_begin);
  }
}

TEST(MapTest, UnseenGaussiansKeepTheirMeansAndVariances) {
  const Case c = MakeCase(11);
  const MapOptions options;
  auto map = MapUpdate(options, c.stats, kMvw, c.prior, nullptr);
  ASSERT_TRUE(map.ok()) << map.status();
  const uint32_t unseen[] = {c.prior.gauss_begin(0), c.unseen_gauss};
  for (const uint32_t g : unseen) {
    for (int32_t d = 0; d < c.prior.dim(); ++d) {
      EXPECT_EQ(map->mean(g)[d], c.prior.mean(g)[d]) << "Gaussian " << g;
      EXPECT_EQ(map->variance(g)[d], c.prior.variance(g)[d]) << "Gaussian " << g;
    }
  }
  // The unseen pdf's weights stay; the unseen Gaussian's shrinks as its pdf's others take the
  // count: tau w / (c + tau).
  for (uint32_t g = c.prior.gauss_begin(0); g < c.prior.gauss_end(0); ++g) {
    EXPECT_FLOAT_EQ(map->weight(g), c.prior.weight(g));
  }
  int32_t pdf = 0;
  while (c.prior.gauss_end(pdf) <= c.unseen_gauss) ++pdf;
  const double count = c.stats.PdfOccupancy(pdf);
  EXPECT_FLOAT_EQ(
      map->weight(c.unseen_gauss),
      float(options.weight_tau * c.prior.weight(c.unseen_gauss) / (count + options.weight_tau)));
}

TEST(MapTest, RejectsWhatItCannotDo) {
  const Case c = MakeCase(13);
  const GmmStats means_only = Restrict(c.stats, kGmmMeans | kGmmWeights);
  auto map = MapUpdate(MapOptions{}, means_only, kMvw, c.prior, nullptr);
  ASSERT_FALSE(map.ok());
  EXPECT_NE(map.status().message().find("update flags mvw ask for more than the statistics keep"),
            std::string::npos)
      << map.status();
  for (const double tau :
       {-1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    map = MapUpdate({.mean_tau = 10, .variance_tau = tau, .weight_tau = 10}, c.stats, kMvw, c.prior,
                    nullptr);
    ASSERT_FALSE(map.ok());
    EXPECT_NE(map.status().message().find("variance tau"), std::string::npos) << map.status();
  }
  const Case other = MakeCase(14);  // other Gaussian counts per pdf
  map = MapUpdate(MapOptions{}, other.stats, kMvw, c.prior, nullptr);
  ASSERT_FALSE(map.ok());
  EXPECT_NE(map.status().message().find("Gaussians in the statistics"), std::string::npos)
      << map.status();
}

// ---- The AmDiagGmm table.

GmmModel KaldiModel() {
  auto model = ReadKaldiModelFile(DataPath("kaldi-mono/final.mdl"));
  EXPECT_TRUE(model.ok()) << model.status();
  return *std::move(model);
}

// Every entry of an AmDiagGmm table, in order.
std::vector<std::pair<std::string, GmmModel>> ReadAmTable(const std::string& rspecifier) {
  std::vector<std::pair<std::string, GmmModel>> entries;
  auto reader = AmDiagGmmTableReader::Open(rspecifier);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return entries;
  std::string key;
  GmmModel model;
  while (true) {
    auto more = (*reader)->Next(&key, &model);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) return entries;
    entries.emplace_back(key, model);
  }
}

// Kaldi stores 1/var and mean/var in float, so a model read back is within a float rounding or
// two of the one written.
void ExpectSameGmms(const GmmModel& a, const GmmModel& b, double tolerance) {
  ASSERT_EQ(a.spec().gauss_begin, b.spec().gauss_begin);
  ASSERT_EQ(a.dim(), b.dim());
  for (int64_t g = 0; g < a.num_gauss(); ++g) {
    EXPECT_NEAR(a.weight(g), b.weight(g), tolerance * a.weight(g)) << "Gaussian " << g;
    for (int32_t d = 0; d < a.dim(); ++d) {
      const float scale = std::max(std::abs(a.mean(g)[d]), std::sqrt(a.variance(g)[d]));
      EXPECT_NEAR(a.mean(g)[d], b.mean(g)[d], tolerance * scale) << "Gaussian " << g;
      EXPECT_NEAR(a.variance(g)[d], b.variance(g)[d], tolerance * a.variance(g)[d])
          << "Gaussian " << g;
    }
  }
}

TEST(AmDiagGmmTableTest, EntriesAreTheAmDiagGmmOfAModelFile) {
  const GmmModel model = KaldiModel();
  TempDir dir;
  for (const bool binary : {true, false}) {
    SCOPED_TRACE(binary ? "binary" : "text");
    const std::string path = dir.file(binary ? "am.ark" : "am.txt");
    {
      auto writer = AmDiagGmmTableWriter::Open((binary ? "ark:" : "ark,t:") + path);
      ASSERT_TRUE(writer.ok()) << writer.status();
      ASSERT_TRUE((*writer)->Write("spk1", model).ok());
      ASSERT_TRUE((*writer)->Write("spk2", model).ok());
      ASSERT_TRUE((*writer)->Close().ok());
    }
    std::ostringstream file;
    ASSERT_TRUE(WriteKaldiModel(model, file, binary).ok());
    // The model file's AmDiagGmm: from <DIMENSION> on, after the binary marker, if any.
    const std::string am = (binary ? std::string("\0B", 2) : std::string()) +
                           file.str().substr(file.str().find("<DIMENSION>"));
    EXPECT_EQ(ReadFile(path), "spk1 " + am + "spk2 " + am);
    const auto entries = ReadAmTable("ark:" + path);
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].first, "spk1");
    EXPECT_EQ(entries[1].first, "spk2");
    EXPECT_TRUE(entries[1].second.hmm().empty());
    ExpectSameGmms(model, entries[1].second, 3e-7);
  }
}

TEST(AmDiagGmmTableTest, ReadErrorsNameTheEntry) {
  TempDir dir;
  WriteFile(dir.file("bad.ark"), "spk1 <DIMENSION> 2 <NUMPDFS> 1 <DiagGMM> <WEIGHTS> [ 1 ]\n");
  auto reader = AmDiagGmmTableReader::Open("ark:" + dir.file("bad.ark"));
  ASSERT_TRUE(reader.ok());
  std::string key;
  GmmModel model;
  auto more = (*reader)->Next(&key, &model);
  ASSERT_FALSE(more.ok());
  EXPECT_NE(more.status().message().find("(key spk1)"), std::string::npos) << more.status();
}

// ---- gmmscore adapt on the real Kaldi data, posteriors of weight 1 from its alignments.

std::string Cli() { return std::string(GMMSCORE_CLI); }
std::string Model() { return DataPath("kaldi-mono/final.mdl"); }
std::string Feats() { return DataPath("kaldi-mono/feats.ark"); }

std::map<std::string, TransitionPosterior> AlignmentPosteriors() {
  std::map<std::string, TransitionPosterior> posteriors;
  for (const auto& [key, ali] :
       testing::ParseInt32Archive(ReadFile(DataPath("kaldi-mono/ali.txt")))) {
    for (const int32_t tid : ali) posteriors[key].push_back({{tid, 1.0f}});
  }
  return posteriors;
}

// A text Posterior archive: "utt [ tid 1 ] [ tid 1 ] ...".
std::string PosteriorArchive(const std::map<std::string, TransitionPosterior>& posteriors) {
  std::string text;
  for (const auto& [key, frames] : posteriors) {
    text += key;
    for (const auto& frame : frames) {
      text += " [";
      for (const auto& [tid, weight] : frame) {
        text += " " + std::to_string(tid) + " " + std::to_string(weight);
      }
      text += " ]";
    }
    text += "\n";
  }
  return text;
}

// What the command should write for a speaker (or utterance): MapUpdate of the statistics of its
// utterances, accumulated in order.
GmmModel Expected(const GmmModel& model, const std::vector<std::string>& utterances,
                  const MapOptions& options, uint16_t flags) {
  const auto feats = testing::ReadTable("ark:" + Feats());
  const auto posteriors = AlignmentPosteriors();
  ModelStats stats = ModelStats::ForModel(model, flags);
  const GmmAccumulator accumulator(model);
  for (const std::string& utt : utterances) {
    double weight = 0.0;
    EXPECT_TRUE(
        accumulator.AccumulatePosteriors(feats.at(utt), posteriors.at(utt), &stats, &weight).ok());
  }
  auto adapted = MapUpdate(options, stats.gmm, flags, model, nullptr);
  EXPECT_TRUE(adapted.ok()) << adapted.status();
  return *std::move(adapted);
}

TEST(AdaptCliTest, PerUtteranceWritesMapUpdatesModels) {
  TempDir dir;
  const std::string log = dir.file("log");
  WriteFile(dir.file("post.txt"), PosteriorArchive(AlignmentPosteriors()));
  // As Kaldi recipes call gmm-adapt-map: piped posteriors, the table to a file.
  ASSERT_EQ(RunCommand(Cli() + " adapt " + Model() + " ark:" + Feats() + " 'ark,s,cs:cat " +
                           dir.file("post.txt") + " |' ark:" + dir.file("map.ark"),
                       log),
            0)
      << ReadFile(log);
  const std::string messages = ReadFile(log);
  for (const char* line :
       {"LOG (gmmscore adapt) For utterance cards-001, objective function change from MAP was",
        "Done 6 files, 0 with errors", "Overall acoustic likelihood was -90.63",
        "over 1598 frames."}) {
    EXPECT_NE(messages.find(line), std::string::npos) << line << "\n" << messages;
  }
  const GmmModel model = KaldiModel();
  const auto entries = ReadAmTable("ark:" + dir.file("map.ark"));
  ASSERT_EQ(entries.size(), 6u);
  const auto feats = testing::ReadTable("ark:" + Feats());
  auto key = feats.begin();
  for (const auto& [utt, adapted] : entries) {
    EXPECT_EQ(utt, key++->first);  // in the order of the features
    ExpectSameGmms(Expected(model, {utt}, MapOptions{}, kGmmMeans | kGmmWeights), adapted, 3e-7);
  }
}

TEST(AdaptCliTest, PerSpeakerPoolsTheSpeakersUtterances) {
  TempDir dir;
  const std::string log = dir.file("log");
  WriteFile(dir.file("post.ark"), PosteriorArchive(AlignmentPosteriors()));
  WriteFile(dir.file("spk2utt"),
            "spkA cards-001 lib-0880 sp1.1-lib-0920\n"
            "spkB raw-goforward cards-003 sp0.9-cards-002 no-such-utt\n");
  ASSERT_EQ(RunCommand(Cli() + " adapt --spk2utt=ark:" + dir.file("spk2utt") +
                           " --update-flags=mvw --mean-tau=5 --variance-tau=20 --weight-tau=2 " +
                           Model() + " ark:" + Feats() + " ark:" + dir.file("post.ark") +
                           " ark,t:" + dir.file("map.txt"),
                       log),
            0)
      << ReadFile(log);
  const std::string messages = ReadFile(log);
  for (const char* line : {"For speaker spkA, objective function change from MAP was",
                           "For speaker spkB", "Did not find features for utterance no-such-utt",
                           "Done 6 files, 0 with errors", "over 1598 frames."}) {
    EXPECT_NE(messages.find(line), std::string::npos) << line << "\n" << messages;
  }
  EXPECT_EQ(ReadFile(dir.file("map.txt")).substr(0, 26), "spkA <DIMENSION> 39 <NUMPD");
  const GmmModel model = KaldiModel();
  const auto entries = ReadAmTable("ark:" + dir.file("map.txt"));
  ASSERT_EQ(entries.size(), 2u);
  const MapOptions options{.mean_tau = 5, .variance_tau = 20, .weight_tau = 2};
  // Text keeps 7 significant digits.
  ExpectSameGmms(Expected(model, {"cards-001", "lib-0880", "sp1.1-lib-0920"}, options, kMvw),
                 entries[0].second, 2e-6);
  ExpectSameGmms(Expected(model, {"raw-goforward", "cards-003", "sp0.9-cards-002"}, options, kMvw),
                 entries[1].second, 2e-6);
}

TEST(AdaptCliTest, ModelOutIsAWholeModelForOneSpeaker) {
  TempDir dir;
  const std::string log = dir.file("log");
  WriteFile(dir.file("post.ark"), PosteriorArchive(AlignmentPosteriors()));
  WriteFile(dir.file("spk2utt"), "spkA cards-001 lib-0880\n");
  ASSERT_EQ(RunCommand(Cli() + " adapt --spk2utt=ark:" + dir.file("spk2utt") + " --model-out=" +
                           dir.file("spkA.mdl") + " " + Model() + " ark:" + Feats() +
                           " ark:" + dir.file("post.ark") + " ark:" + dir.file("map.ark"),
                       log),
            0)
      << ReadFile(log);
  auto whole = ReadKaldiModelFile(dir.file("spkA.mdl"));
  ASSERT_TRUE(whole.ok()) << whole.status();
  const GmmModel model = KaldiModel();
  EXPECT_EQ(whole->hmm().log_probs(), model.hmm().log_probs());
  const auto entries = ReadAmTable("ark:" + dir.file("map.ark"));
  ASSERT_EQ(entries.size(), 1u);
  ExpectSameGmms(entries[0].second, *whole, 0.0);

  // More than one speaker: an error, not a silent choice.
  WriteFile(dir.file("spk2utt"), "spkA cards-001\nspkB lib-0880\n");
  EXPECT_EQ(RunCommand(Cli() + " adapt --spk2utt=ark:" + dir.file("spk2utt") + " --model-out=" +
                           dir.file("two.mdl") + " " + Model() + " ark:" + Feats() +
                           " ark:" + dir.file("post.ark") + " ark:" + dir.file("map.ark"),
                       log),
            255);
  EXPECT_NE(ReadFile(log).find("--model-out takes a single speaker; the input has more (spkB)"),
            std::string::npos)
      << ReadFile(log);
}

TEST(AdaptCliTest, MissingAndMisfitPosteriorsAreWarnings) {
  TempDir dir;
  const std::string log = dir.file("log");
  auto posteriors = AlignmentPosteriors();
  posteriors.erase("cards-003");
  posteriors["lib-0880"].pop_back();
  WriteFile(dir.file("post.ark"), PosteriorArchive(posteriors));
  ASSERT_EQ(RunCommand(Cli() + " adapt " + Model() + " ark:" + Feats() +
                           " ark:" + dir.file("post.ark") + " ark:" + dir.file("map.ark"),
                       log),
            0)
      << ReadFile(log);
  const std::string messages = ReadFile(log);
  for (const char* line :
       {"WARNING (gmmscore adapt) Did not find aligned transcription for utterance cards-003",
        "WARNING (gmmscore adapt) Posteriors has wrong size 296 vs. 297 (utterance lib-0880)",
        "Done 4 files, 2 with errors"}) {
    EXPECT_NE(messages.find(line), std::string::npos) << line << "\n" << messages;
  }
  EXPECT_EQ(ReadAmTable("ark:" + dir.file("map.ark")).size(), 4u);

  // Nothing adapted: exit status 1, as gmm-adapt-map.
  WriteFile(dir.file("none.ark"), "");
  EXPECT_EQ(RunCommand(Cli() + " adapt " + Model() + " ark:" + Feats() +
                           " ark:" + dir.file("none.ark") + " ark:" + dir.file("map.ark"),
                       log),
            1);
  EXPECT_NE(ReadFile(log).find("Done 0 files, 6 with errors"), std::string::npos) << ReadFile(log);
}

TEST(AdaptCliTest, BadInputIsAnErrorNamingTheUtterance) {
  TempDir dir;
  const std::string log = dir.file("log");
  auto posteriors = AlignmentPosteriors();
  WriteFile(dir.file("post.ark"), PosteriorArchive(posteriors));
  const auto run = [&](const std::string& options, const std::string& feats,
                       const std::string& post) {
    return RunCommand(Cli() + " adapt " + options + " " + Model() + " " + feats + " " + post +
                          " ark:" + dir.file("map.ark"),
                      log);
  };
  // An unknown transition-id.
  posteriors["lib-0880"][3] = {{5000, 1.0f}};
  WriteFile(dir.file("bad-tid.ark"), PosteriorArchive(posteriors));
  EXPECT_EQ(run("", "ark:" + Feats(), "ark:" + dir.file("bad-tid.ark")), 255);
  EXPECT_NE(ReadFile(log).find("gmmscore adapt: utterance lib-0880: frame 3: transition-id 5000 "
                               "is not in the model"),
            std::string::npos)
      << ReadFile(log);

  // A frame that is not a number, and features of another dimension.
  auto feats = testing::ReadTable("ark:" + Feats());
  {
    auto nan = MatrixTableWriter::Open("ark:" + dir.file("nan.ark"));
    auto narrow = MatrixTableWriter::Open("ark:" + dir.file("narrow.ark"));
    ASSERT_TRUE(nan.ok() && narrow.ok());
    for (auto& [key, m] : feats) {
      Matrix cut(m.rows, 13);
      for (int32_t t = 0; t < m.rows; ++t) {
        for (int32_t d = 0; d < 13; ++d) cut.at(t, d) = m.at(t, d);
      }
      if (key == "raw-goforward") m.at(5, 2) = std::numeric_limits<float>::quiet_NaN();
      ASSERT_TRUE((*nan)->Write(key, m).ok());
      ASSERT_TRUE((*narrow)->Write(key, cut).ok());
    }
    ASSERT_TRUE((*nan)->Close().ok() && (*narrow)->Close().ok());
  }
  EXPECT_EQ(run("", "ark:" + dir.file("nan.ark"), "ark:" + dir.file("post.ark")), 255);
  EXPECT_NE(ReadFile(log).find("utterance raw-goforward: frame 5, dimension 2 is nan"),
            std::string::npos)
      << ReadFile(log);
  WriteFile(dir.file("spk2utt"), "spkA cards-001 cards-003\n");
  EXPECT_EQ(run("--spk2utt=ark:" + dir.file("spk2utt"), "ark:" + dir.file("narrow.ark"),
                "ark:" + dir.file("post.ark")),
            255);
  EXPECT_NE(ReadFile(log).find("utterance cards-001: features have dimension 13, the model 39"),
            std::string::npos)
      << ReadFile(log);

  // Options gmm-adapt-map would refuse or misuse.
  EXPECT_EQ(run("--update-flags=mx", "ark:" + Feats(), "ark:" + dir.file("post.ark")), 255);
  EXPECT_NE(ReadFile(log).find("invalid letter 'x'"), std::string::npos) << ReadFile(log);
  EXPECT_EQ(run("--mean-tau=-1", "ark:" + Feats(), "ark:" + dir.file("post.ark")), 255);
  EXPECT_NE(ReadFile(log).find("mean tau is -1"), std::string::npos) << ReadFile(log);
  EXPECT_EQ(run("", "ark:" + Feats(), "ark:" + dir.file("no-such-file")), 255);
  EXPECT_NE(ReadFile(log).find("no-such-file"), std::string::npos) << ReadFile(log);
}

}  // namespace
}  // namespace gmmscore

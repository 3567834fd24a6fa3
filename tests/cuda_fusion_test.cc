// Several models scored and fused on one device (CudaWorkspace, CudaFusedScorer) against the
// CPU fusion (FuseScores) of the same per-model scores, and those against the float64 reference.
// Every test that needs a GPU skips, with the reason, where no CUDA device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <type_traits>

#include "kernels/cpu/reference_scorer.h"
#include "kernels/cuda/common/cuda_buffers.h"
#include "kernels/cuda/common/cuda_device.h"
#include "kernels/cuda/score/cuda_fused_scorer.h"
#include "kernels/cuda/score/cuda_workspace.h"
#include "kernels/cuda/score/encode_rows_kernel.h"
#include "model/fusion.h"
#include "model/random_model.h"
#include "proto/wire_codec.h"
#include "tests/cuda_test_util.h"

namespace gmmscore {
namespace {

using testing::kCudaTolerance;
using testing::MaxAbsError;
using testing::WithCudaDevice;

constexpr int32_t kDim = 39;

// Three models of 150 states (1 to 40 Gaussians each) whose means sit at -2, 0 and +2: frames
// drawn around +2 favour the third, frames around -2 the first, so select switches models.
std::vector<GmmModel> ThreeModels() {
  std::vector<GmmModel> models;
  for (int k = 0; k < 3; ++k) {
    RandomModelOptions o;
    o.dim = kDim;
    o.num_states = 150;
    o.max_gauss = 40;
    o.mean_offset = 2.0f * float(k - 1);
    models.push_back(RandomModel(o, 500u + k));
  }
  return models;
}

// 300 frames: the first half around +2, the second around -2.
Matrix ShiftingFeatures() {
  Matrix feats = RandomFeatures(300, kDim, 2.0f, 2.5f, 77);
  const Matrix second = RandomFeatures(150, kDim, -2.0f, 2.5f, 78);
  std::copy(second.data.begin(), second.data.end(), feats.row(150));
  return feats;
}

double MaxAbsDifference(const Matrix& a, const Matrix& b) {
  double worst = 0.0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    const double d = std::abs(double(a.data[i]) - double(b.data[i]));
    worst = std::isnan(d) ? INFINITY : std::max(worst, d);
  }
  return worst;
}

FusionSpec Spec(FusionRule rule, std::vector<float> weights, int32_t select_window = 50) {
  FusionSpec spec;
  spec.rule = rule;
  spec.weights = std::move(weights);
  spec.select_window = select_window;
  return spec;
}

struct FusionCase {
  const char* name;
  FusionSpec spec;
};

void PrintTo(const FusionCase& c, std::ostream* os) { *os << c.name; }

class CudaFusionVsHost : public WithCudaDevice<::testing::TestWithParam<FusionCase>> {};

TEST_P(CudaFusionVsHost, FusedOnTheDeviceEqualsFuseScoresOfTheModelScores) {
  const std::vector<GmmModel> models = ThreeModels();
  const Matrix feats = ShiftingFeatures();
  FusionSpec spec = GetParam().spec;
  ASSERT_TRUE(ValidateFusion(&spec, models.size()).ok());
  CudaScorerOptions options;
  options.max_frames = 128;  // three launches: select's running sums cross two of them
  options.poison_output = true;
  auto fused_scorer = CudaFusedScorer::Create({&models[0], &models[1], &models[2]}, spec, options);
  ASSERT_TRUE(fused_scorer.ok()) << fused_scorer.status();

  Matrix fused;
  std::vector<Matrix> per_model;
  ASSERT_TRUE((*fused_scorer)->ScoreWithModelScores(feats, &fused, &per_model).ok());
  ASSERT_EQ(per_model.size(), 3u);
  for (size_t k = 0; k < models.size(); ++k) {
    EXPECT_LE(MaxAbsError(per_model[k], ReferenceScores(models[k], feats)), kCudaTolerance) << k;
  }
  Matrix expected;
  std::vector<int32_t> selected;
  ASSERT_TRUE(
      FuseScores(spec, {&per_model[0], &per_model[1], &per_model[2]}, &expected, &selected).ok());
  ASSERT_EQ(fused.rows, expected.rows);
  ASSERT_EQ(fused.cols, expected.cols);
  if (spec.rule == FusionRule::kLogAdd) {
    // The device's exp and log are not glibc's: the last bit or two of a float may differ.
    for (size_t i = 0; i < fused.data.size(); ++i) {
      ASSERT_NEAR(fused.data[i], expected.data[i], 4e-6 * std::abs(expected.data[i])) << i;
    }
  } else {
    EXPECT_EQ(MaxAbsDifference(fused, expected), 0.0);
  }
  if (spec.rule == FusionRule::kSelectBest) {
    EXPECT_GE(std::set<int32_t>(selected.begin(), selected.end()).size(), 2u)
        << "the test's models should take turns";
  }
  // Without the per-model copies: the same fused scores.
  Matrix again;
  ASSERT_TRUE((*fused_scorer)->Score(feats, &again).ok());
  EXPECT_EQ(again, fused);
}

INSTANTIATE_TEST_SUITE_P(
    Rules, CudaFusionVsHost,
    ::testing::Values(FusionCase{"Max", Spec(FusionRule::kMax, {})},
                      FusionCase{"LogLinear", Spec(FusionRule::kLogLinear, {0.2f, 0.5f, 0.3f})},
                      FusionCase{"LogAdd", Spec(FusionRule::kLogAdd, {0.25f, 0.25f, 0.5f})},
                      FusionCase{"LogAddZeroWeight", Spec(FusionRule::kLogAdd, {0.0f, 0.4f, 0.6f})},
                      FusionCase{"Select5", Spec(FusionRule::kSelectBest, {}, 5)},
                      FusionCase{"Select200", Spec(FusionRule::kSelectBest, {}, 200)}),
    [](const ::testing::TestParamInfo<FusionCase>& param_info) { return param_info.param.name; });

using CudaWorkspaceTest = WithCudaDevice<::testing::Test>;

// Two resident models and a workspace that holds batches of up to 64 frames of them.
struct TwoModelSetup {
  std::vector<GmmModel> models;
  std::vector<std::unique_ptr<CudaResidentModel>> residents;
  std::vector<const CudaResidentModel*> set;
  std::vector<CudaKernelConfig> configs;             // SIMT, one block a group
  std::vector<std::unique_ptr<CudaScorer>> scorers;  // each model alone, in the same kernel
  std::unique_ptr<CudaWorkspace> workspace;
};

std::unique_ptr<CudaResidentModel> Resident(const GmmModel& model) {
  auto layouts = CudaResidentModel::Plan(model, CudaKernelChoice());
  EXPECT_TRUE(layouts.ok()) << layouts.status();
  auto resident = CudaResidentModel::Upload(*layouts, 0);
  EXPECT_TRUE(resident.ok()) << resident.status();
  return *std::move(resident);
}

void MakeTwoModelSetup(TwoModelSetup* s) {
  std::vector<GmmModel> three = ThreeModels();
  s->models.push_back(std::move(three[0]));
  s->models.push_back(std::move(three[2]));
  WorkspaceCapacity capacity{64, kDim, 150, 2, 0};
  for (const GmmModel& m : s->models) {
    std::unique_ptr<CudaResidentModel> resident = Resident(m);
    ASSERT_NE(resident, nullptr);
    capacity.split_floats = std::max(capacity.split_floats, resident->SplitScratchFloats(64));
    s->set.push_back(resident.get());
    s->configs.push_back(CudaKernelConfig());
    s->residents.push_back(std::move(resident));
    CudaScorerOptions alone;
    alone.kernels.fixed = CudaKernelConfig();
    auto scorer = CudaScorer::Create(m, alone);
    ASSERT_TRUE(scorer.ok()) << scorer.status();
    s->scorers.push_back(*std::move(scorer));
  }
  auto workspace = CudaWorkspace::Create(0, /*poison_output=*/true);
  ASSERT_TRUE(workspace.ok()) << workspace.status();
  s->workspace = *std::move(workspace);
  ASSERT_TRUE(s->workspace->Reserve(capacity).ok());
}

Matrix Rows(const float* data, int32_t first, int32_t n, int32_t cols) {
  Matrix m(n, cols);
  std::copy_n(data + size_t(first) * cols, size_t(n) * cols, m.data.data());
  return m;
}

TEST_F(CudaWorkspaceTest, SegmentsOfOneBatchFuseByTheirOwnRules) {
  TwoModelSetup s;
  ASSERT_NO_FATAL_FAILURE(MakeTwoModelSetup(&s));
  const Matrix feats = RandomFeatures(25, kDim, 0.0f, 2.5f, 5);
  std::copy(feats.data.begin(), feats.data.end(), s.workspace->staged_feats());
  const FusionSpec max = Spec(FusionRule::kMax, {0.5f, 0.5f});
  const FusionSpec linear = Spec(FusionRule::kLogLinear, {0.3f, 0.7f});
  const FusionSpec add = Spec(FusionRule::kLogAdd, {0.5f, 0.5f});
  // Windows of four streams: max, one left to the caller, log-linear, log-add.
  const std::vector<FusionSegment> segments = {{7, &max}, {5, nullptr}, {10, &linear}, {3, &add}};
  ASSERT_TRUE(
      s.workspace->Enqueue(s.set, s.configs, segments, 25, /*copy_model_scores=*/true).ok());
  ASSERT_TRUE(s.workspace->Wait().ok());

  std::vector<Matrix> own(2);
  for (size_t k = 0; k < 2; ++k) {
    ASSERT_TRUE(s.scorers[k]->Score(feats, &own[k]).ok());
    EXPECT_EQ(Rows(s.workspace->model_scores(int32_t(k)), 0, 25, 150), own[k]) << k;
  }
  int32_t first = 0;
  for (const FusionSegment& segment : segments) {
    if (segment.fusion != nullptr) {
      const Matrix a = Rows(own[0].data.data(), first, segment.frames, 150);
      const Matrix b = Rows(own[1].data.data(), first, segment.frames, 150);
      Matrix expected;
      ASSERT_TRUE(FuseScores(*segment.fusion, {&a, &b}, &expected).ok());
      EXPECT_LE(MaxAbsDifference(Rows(s.workspace->fused(), first, segment.frames, 150), expected),
                segment.fusion->rule == FusionRule::kLogAdd ? 1e-3 : 0.0)
          << "segment at frame " << first;
    }
    first += segment.frames;
  }
}

// What the host's encoder makes of a row: the first of its largest scores, and its 16-bit values.
struct HostEncoded {
  int32_t best = 0;
  std::string bytes;
};
HostEncoded EncodeOnHost(const float* row, int32_t states, DeviceScoreEncoding encoding) {
  HostEncoded e;
  e.best = int32_t(std::max_element(row, row + states) - row);
  const std::span<const float> values(row, size_t(states));
  if (encoding == DeviceScoreEncoding::kFloat16) {
    wire::AppendFloat16(values, &e.bytes);
  } else {
    wire::AppendRelative16(values, row[e.best], &e.bytes);
  }
  return e;
}

std::string Bytes(const uint16_t* values, int32_t n) {
  std::string bytes;
  wire::AppendUint16({values, size_t(n)}, &bytes);
  return bytes;
}

// Rows built to be hard: differences past RELATIVE16's range (saturation), ties for the best, a
// row of -inf only, -inf beside finite scores, steps of a float's last bit at large magnitude,
// values past binary16's range, a NaN; 613 states (not a multiple of the block), one frame left
// alone.
using CudaEncode16Test = WithCudaDevice<::testing::Test>;

TEST_F(CudaEncode16Test, EqualsTheHostEncoderBitForBit) {
  constexpr int32_t kStates = 613;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> spread(-40.0f, 0.0f), wide(-1000.0f, -100.0f);
  std::vector<std::vector<float>> rows;
  rows.reserve(8);  // the references below stay valid
  auto& typical = rows.emplace_back();
  for (int32_t s = 0; s < kStates; ++s) typical.push_back(-90.0f + spread(rng));
  auto& saturating = rows.emplace_back();
  for (int32_t s = 0; s < kStates; ++s) saturating.push_back(wide(rng));
  saturating[300] = saturating[17] = -50.0f;  // a tie: the first wins
  rows.emplace_back(size_t(kStates), -INFINITY);
  auto& partly_infinite = rows.emplace_back(size_t(kStates), -INFINITY);
  partly_infinite[kStates - 1] = -7.0f;
  partly_infinite[5] = -200.0f;
  auto& fine = rows.emplace_back();
  for (int32_t s = 0; s < kStates; ++s) {
    fine.push_back(std::nextafter(-12345.0f - float(s % 7), 0.0f));
  }
  auto& huge = rows.emplace_back();
  for (int32_t s = 0; s < kStates; ++s) huge.push_back(-70000.0f - 3.0f * float(s));
  auto& with_nan = rows.emplace_back(typical);
  with_nan[400] = std::nanf("");
  rows.push_back(typical);  // not encoded
  const int32_t frames = int32_t(rows.size());
  std::vector<float> scores;
  for (const auto& r : rows) scores.insert(scores.end(), r.begin(), r.end());
  std::vector<DeviceRowEncoding> modes;
  for (int32_t t = 0; t + 1 < frames; ++t) {
    modes.push_back(t % 2 == 0 ? DeviceRowEncoding::kRelative16 : DeviceRowEncoding::kFloat16);
  }
  modes.push_back(DeviceRowEncoding::kNone);

  auto d_scores = UploadToDevice(scores);
  auto d_modes = UploadToDevice(modes);
  auto d_encoded = DeviceArray<uint16_t>::Allocate(scores.size());
  auto d_best_score = DeviceArray<float>::Allocate(size_t(frames));
  auto d_best_state = DeviceArray<int32_t>::Allocate(size_t(frames));
  ASSERT_TRUE(d_scores.ok() && d_modes.ok() && d_encoded.ok() && d_best_score.ok() &&
              d_best_state.ok());
  ASSERT_TRUE(LaunchEncodeRows(d_scores->get(), frames, kStates, d_modes->get(), d_encoded->get(),
                               d_best_score->get(), d_best_state->get(), nullptr, nullptr)
                  .ok());
  std::vector<uint16_t> encoded(scores.size());
  std::vector<float> best_score(static_cast<size_t>(frames));
  std::vector<int32_t> best_state(static_cast<size_t>(frames));
  ASSERT_EQ(cudaMemcpy(encoded.data(), d_encoded->get(), encoded.size() * sizeof(uint16_t),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(best_score.data(), d_best_score->get(), size_t(frames) * sizeof(float),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(best_state.data(), d_best_state->get(), size_t(frames) * sizeof(int32_t),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (int32_t t = 0; t + 1 < frames; ++t) {
    if (t == frames - 2) {
      EXPECT_EQ(best_state[size_t(t)], -1) << "a row with a NaN is left to the host";
      continue;
    }
    const auto encoding = static_cast<DeviceScoreEncoding>(modes[size_t(t)]);
    const HostEncoded host = EncodeOnHost(rows[size_t(t)].data(), kStates, encoding);
    EXPECT_EQ(best_state[size_t(t)], host.best) << "frame " << t;
    EXPECT_EQ(best_score[size_t(t)], rows[size_t(t)][size_t(host.best)]) << "frame " << t;
    EXPECT_EQ(Bytes(encoded.data() + size_t(t) * kStates, kStates), host.bytes) << "frame " << t;
  }
  EXPECT_EQ(best_state[1], 17);
}

// The host's BEAM_SPARSE rule before its ordering: the states with score >= best - beam (the
// threshold rounded once), in state order.
std::vector<std::pair<float, int32_t>> WithinBeam(const float* row, int32_t states, float beam) {
  const float threshold = row[std::max_element(row, row + states) - row] - beam;
  std::vector<std::pair<float, int32_t>> kept;
  for (int32_t s = 0; s < states; ++s) {
    if (row[s] >= threshold) kept.emplace_back(row[s], s);
  }
  return kept;
}

// Beam candidates from the same hard rows, beams from a hair to all-inclusive, and a capacity of
// 40: rows with more within their beam, and the row with a NaN, are left to the host (-1).
TEST_F(CudaEncode16Test, BeamCandidatesAreTheHostsWithinTheBeam) {
  constexpr int32_t kStates = 613, kCapacity = 40;
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> spread(-40.0f, 0.0f);
  std::vector<std::vector<float>> rows;
  std::vector<float> beams;
  for (float beam : {1e-6f, 0.5f, 3.0f, 10.0f, 1e9f}) {
    auto& r = rows.emplace_back();
    for (int32_t s = 0; s < kStates; ++s) r.push_back(-90.0f + spread(rng));
    r[100] = r[500] = 1.0f;  // a tie for the best
    beams.push_back(beam);
  }
  rows.emplace_back(size_t(kStates), -INFINITY);  // every state within any beam: too many
  beams.push_back(10.0f);
  auto& partly = rows.emplace_back(size_t(kStates), -INFINITY);
  partly[kStates - 1] = -7.0f;
  partly[3] = -7.0f - 10.0f;  // exactly at the threshold: kept
  partly[4] = std::nextafter(-17.0f, -INFINITY);
  beams.push_back(10.0f);
  auto& with_nan = rows.emplace_back(rows.front());
  with_nan[7] = std::nanf("");
  beams.push_back(10.0f);
  const int32_t frames = int32_t(rows.size());
  std::vector<float> scores;
  for (const auto& r : rows) scores.insert(scores.end(), r.begin(), r.end());
  const std::vector<DeviceRowEncoding> modes(size_t(frames), DeviceRowEncoding::kBeamSparse);

  auto d_scores = UploadToDevice(scores);
  auto d_modes = UploadToDevice(modes);
  auto d_beams = UploadToDevice(beams);
  auto d_best_score = DeviceArray<float>::Allocate(size_t(frames));
  auto d_best_state = DeviceArray<int32_t>::Allocate(size_t(frames));
  auto d_kept_scores = DeviceArray<float>::Allocate(size_t(frames) * kCapacity);
  auto d_kept_states = DeviceArray<int32_t>::Allocate(size_t(frames) * kCapacity);
  auto d_counts = DeviceArray<int32_t>::Allocate(size_t(frames));
  ASSERT_TRUE(d_scores.ok() && d_modes.ok() && d_beams.ok() && d_best_score.ok() &&
              d_best_state.ok() && d_kept_scores.ok() && d_kept_states.ok() && d_counts.ok());
  const DeviceBeamOutput beam{d_beams->get(), kCapacity, d_kept_scores->get(), d_kept_states->get(),
                              d_counts->get()};
  ASSERT_TRUE(LaunchEncodeRows(d_scores->get(), frames, kStates, d_modes->get(), nullptr,
                               d_best_score->get(), d_best_state->get(), &beam, nullptr)
                  .ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto download = [&](const auto& array, size_t n) {
    std::vector<std::remove_cv_t<std::remove_pointer_t<decltype(array->get())>>> v(n);
    EXPECT_EQ(cudaMemcpy(v.data(), array->get(), n * sizeof(v[0]), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return v;
  };
  const auto counts = download(d_counts, size_t(frames));
  const auto kept_scores = download(d_kept_scores, size_t(frames) * kCapacity);
  const auto kept_states = download(d_kept_states, size_t(frames) * kCapacity);
  const auto best_state = download(d_best_state, size_t(frames));
  for (int32_t t = 0; t < frames; ++t) {
    if (t == frames - 1) {
      EXPECT_EQ(best_state[size_t(t)], -1);
      EXPECT_EQ(counts[size_t(t)], -1) << "a row with a NaN is left to the host";
      continue;
    }
    const auto host = WithinBeam(rows[size_t(t)].data(), kStates, beams[size_t(t)]);
    if (host.size() > size_t(kCapacity)) {
      EXPECT_EQ(counts[size_t(t)], -1) << "frame " << t << ": " << host.size() << " kept";
      continue;
    }
    ASSERT_EQ(counts[size_t(t)], int32_t(host.size())) << "frame " << t;
    for (size_t k = 0; k < host.size(); ++k) {
      EXPECT_EQ(kept_scores[size_t(t) * kCapacity + k], host[k].first) << t << " " << k;
      EXPECT_EQ(kept_states[size_t(t) * kCapacity + k], host[k].second) << t << " " << k;
    }
  }
  EXPECT_EQ(counts[0], 2) << "the two tied best states, within a hair";
  EXPECT_EQ(counts[4], -1) << "all 613 within a beam of 1e9";
  EXPECT_EQ(counts[6], 2) << "the best and the state exactly at the threshold";
}

TEST_F(CudaWorkspaceTest, EncodesTheFusedRowsOfTheSegmentsThatAsk) {
  TwoModelSetup s;
  ASSERT_NO_FATAL_FAILURE(MakeTwoModelSetup(&s));
  const Matrix feats = RandomFeatures(25, kDim, 0.0f, 2.5f, 7);
  std::copy(feats.data.begin(), feats.data.end(), s.workspace->staged_feats());
  const FusionSpec max = Spec(FusionRule::kMax, {0.5f, 0.5f});
  const FusionSpec add = Spec(FusionRule::kLogAdd, {0.5f, 0.5f});
  // The unfused segment's request is ignored: it has no fused rows.
  const std::vector<FusionSegment> segments = {{7, &max, DeviceScoreEncoding::kRelative16},
                                               {5, nullptr, DeviceScoreEncoding::kFloat16},
                                               {4, &max, DeviceScoreEncoding::kNone},
                                               {6, &max, DeviceScoreEncoding::kBeamSparse, 8.0f},
                                               {3, &add, DeviceScoreEncoding::kFloat16}};
  ASSERT_TRUE(
      s.workspace->Enqueue(s.set, s.configs, segments, 25, /*copy_model_scores=*/true).ok());
  ASSERT_TRUE(s.workspace->Wait().ok());
  ASSERT_NE(s.workspace->encoded16(), nullptr);
  int32_t first = 0;
  for (const FusionSegment& segment : segments) {
    if (segment.fusion != nullptr && segment.encoding == DeviceScoreEncoding::kBeamSparse) {
      const BeamCandidates beam = s.workspace->beam_candidates();
      ASSERT_NE(beam.counts, nullptr);
      for (int32_t t = first; t < first + segment.frames; ++t) {
        const float* row = s.workspace->fused() + size_t(t) * 150;
        const auto host = WithinBeam(row, 150, segment.beam);
        ASSERT_EQ(beam.counts[t], int32_t(host.size())) << "frame " << t;
        for (size_t k = 0; k < host.size(); ++k) {
          EXPECT_EQ(beam.scores[size_t(t) * size_t(beam.capacity) + k], host[k].first);
          EXPECT_EQ(beam.states[size_t(t) * size_t(beam.capacity) + k], host[k].second);
        }
        EXPECT_EQ(s.workspace->best_states()[t], int32_t(std::max_element(row, row + 150) - row))
            << "frame " << t;
      }
    } else if (segment.fusion != nullptr && segment.encoding != DeviceScoreEncoding::kNone) {
      for (int32_t t = first; t < first + segment.frames; ++t) {
        const float* row = s.workspace->fused() + size_t(t) * 150;
        const HostEncoded host = EncodeOnHost(row, 150, segment.encoding);
        EXPECT_EQ(s.workspace->best_states()[t], host.best) << "frame " << t;
        EXPECT_EQ(s.workspace->best_scores()[t], row[host.best]) << "frame " << t;
        EXPECT_EQ(Bytes(s.workspace->encoded16() + size_t(t) * 150, 150), host.bytes)
            << "frame " << t;
      }
    }
    first += segment.frames;
  }
  // A batch that asks for no encoding copies none back.
  std::copy(feats.data.begin(), feats.data.end(), s.workspace->staged_feats());
  const std::vector<FusionSegment> plain = {{25, &max}};
  ASSERT_TRUE(s.workspace->Enqueue(s.set, s.configs, plain, 25, false).ok());
  ASSERT_TRUE(s.workspace->Wait().ok());
  EXPECT_EQ(s.workspace->encoded16(), nullptr);
  EXPECT_EQ(s.workspace->beam_candidates().counts, nullptr);
}

// The 16-bit rows' buffer lent with a batch keeps that batch's rows while later batches run
// (each in another buffer); with kLentEncodedBuffers out nothing more is lent, and one given back
// is lent again.
TEST_F(CudaWorkspaceTest, LentRowsOutliveLaterBatches) {
  TwoModelSetup s;
  ASSERT_NO_FATAL_FAILURE(MakeTwoModelSetup(&s));
  const FusionSpec max = Spec(FusionRule::kMax, {0.5f, 0.5f});
  const std::vector<FusionSegment> segments = {{9, &max, DeviceScoreEncoding::kRelative16}};
  std::vector<std::shared_ptr<const uint16_t>> lent;
  std::vector<std::string> bytes;  // what each lent buffer held when it was lent
  for (int32_t batch = 0; batch < kLentEncodedBuffers + 1; ++batch) {
    const Matrix feats = RandomFeatures(9, kDim, 0.0f, 2.5f, uint32_t(100 + batch));
    std::copy(feats.data.begin(), feats.data.end(), s.workspace->staged_feats());
    ASSERT_TRUE(s.workspace->Enqueue(s.set, s.configs, segments, 9, false).ok());
    EXPECT_EQ(s.workspace->LendEncoded16(), nullptr) << "nothing is lent while in flight";
    ASSERT_TRUE(s.workspace->Wait().ok());
    const uint16_t* rows = s.workspace->encoded16();
    ASSERT_NE(rows, nullptr);
    // Every segment asked for an encoding: the float rows stay on the device until fetched.
    ASSERT_TRUE(s.workspace->FetchFusedRows(0, 9).ok());
    for (int32_t t = 0; t < 9; ++t) {
      const float* row = s.workspace->fused() + size_t(t) * 150;
      ASSERT_EQ(Bytes(rows + size_t(t) * 150, 150),
                EncodeOnHost(row, 150, DeviceScoreEncoding::kRelative16).bytes)
          << "batch " << batch << " frame " << t;
    }
    std::shared_ptr<const uint16_t> buffer = s.workspace->LendEncoded16();
    if (batch == kLentEncodedBuffers) {
      EXPECT_EQ(buffer, nullptr) << "all " << kLentEncodedBuffers << " are out";
      // One given back is lent again, holding this batch's rows.
      const std::string mine = Bytes(rows, 9 * 150);
      lent.erase(lent.begin());
      bytes.erase(bytes.begin());
      buffer = s.workspace->LendEncoded16();
      ASSERT_NE(buffer, nullptr);
      EXPECT_EQ(Bytes(buffer.get(), 9 * 150), mine);
    }
    ASSERT_NE(buffer, nullptr) << "batch " << batch;
    EXPECT_EQ(buffer.get(), rows);
    EXPECT_EQ(s.workspace->LendEncoded16(), nullptr) << "a batch's buffer is lent once";
    bytes.push_back(Bytes(buffer.get(), 9 * 150));
    lent.push_back(std::move(buffer));
  }
  for (size_t k = 0; k < lent.size(); ++k) {
    EXPECT_EQ(Bytes(lent[k].get(), 9 * 150), bytes[k]) << "lent buffer " << k;
    for (size_t j = 0; j < k; ++j) EXPECT_NE(lent[j].get(), lent[k].get());
  }
}

TEST_F(CudaWorkspaceTest, OneModelIsScoredStraightIntoTheOutput) {
  TwoModelSetup s;
  ASSERT_NO_FATAL_FAILURE(MakeTwoModelSetup(&s));
  const Matrix feats = RandomFeatures(64, kDim, 0.0f, 2.5f, 6);
  std::copy(feats.data.begin(), feats.data.end(), s.workspace->staged_feats());
  const FusionSegment whole{64, nullptr};
  ASSERT_TRUE(
      s.workspace->Enqueue({s.set.data(), 1}, {s.configs.data(), 1}, {&whole, 1}, 64, false).ok());
  ASSERT_TRUE(s.workspace->Wait().ok());
  Matrix own;
  ASSERT_TRUE(s.scorers[0]->Score(feats, &own).ok());
  EXPECT_EQ(Rows(s.workspace->fused(), 0, 64, 150), own);
}

// A batch whose every segment asked for an encoding leaves its float rows on the device; the
// rows fetched (for a window the kernel left to the host) are the scores.
TEST_F(CudaWorkspaceTest, LeavesEncodedRowsOnTheDeviceUntilFetched) {
  TwoModelSetup s;
  ASSERT_NO_FATAL_FAILURE(MakeTwoModelSetup(&s));
  const Matrix feats = RandomFeatures(16, kDim, 0.0f, 2.5f, 8);
  std::copy(feats.data.begin(), feats.data.end(), s.workspace->staged_feats());
  // The pinned rows hold NaN before: what is not fetched stays so.
  float* host_rows = const_cast<float*>(s.workspace->fused());
  std::fill_n(host_rows, 16 * 150, std::nanf(""));
  const std::vector<FusionSegment> segments = {
      {10, nullptr, DeviceScoreEncoding::kRelative16},
      {6, nullptr, DeviceScoreEncoding::kBeamSparse, 5.0f}};
  ASSERT_TRUE(
      s.workspace->Enqueue({s.set.data(), 1}, {s.configs.data(), 1}, segments, 16, false).ok());
  ASSERT_TRUE(s.workspace->Wait().ok());
  Matrix own;
  ASSERT_TRUE(s.scorers[0]->Score(feats, &own).ok());
  for (int32_t t = 0; t < 10; ++t) {
    const HostEncoded host = EncodeOnHost(own.row(t), 150, DeviceScoreEncoding::kRelative16);
    EXPECT_EQ(s.workspace->best_states()[t], host.best) << "frame " << t;
  }
  EXPECT_NE(s.workspace->beam_candidates().counts, nullptr);
  EXPECT_TRUE(std::isnan(host_rows[3 * 150])) << "not copied back";
  ASSERT_TRUE(s.workspace->FetchFusedRows(4, 3).ok());
  EXPECT_EQ(Rows(host_rows, 4, 3, 150), Rows(own.data.data(), 4, 3, 150));
  EXPECT_TRUE(std::isnan(host_rows[3 * 150]));
  EXPECT_TRUE(std::isnan(host_rows[7 * 150]));
  EXPECT_EQ(s.workspace->FetchFusedRows(10, 7).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(CudaWorkspaceTest, RefusesWhatItCannotDo) {
  TwoModelSetup s;
  ASSERT_NO_FATAL_FAILURE(MakeTwoModelSetup(&s));
  const Matrix feats = RandomFeatures(6, kDim, 0.0f, 2.5f, 7);
  std::copy(feats.data.begin(), feats.data.end(), s.workspace->staged_feats());
  const FusionSpec select = Spec(FusionRule::kSelectBest, {}, 4);
  const FusionSpec max = Spec(FusionRule::kMax, {0.5f, 0.5f});
  const std::vector<FusionSegment> mixed = {{3, &select}, {3, &max}};
  EXPECT_EQ(s.workspace->Enqueue(s.set, s.configs, mixed, 6, false).code(),
            absl::StatusCode::kInvalidArgument);
  const FusionSegment too_long{65, &max};
  EXPECT_EQ(s.workspace->Enqueue(s.set, s.configs, {&too_long, 1}, 65, false).code(),
            absl::StatusCode::kInvalidArgument);
  const FusionSegment short_cover{5, &max};
  EXPECT_EQ(s.workspace->Enqueue(s.set, s.configs, {&short_cover, 1}, 6, false).code(),
            absl::StatusCode::kInvalidArgument);
  // A model of other states cannot join the set.
  RandomModelOptions o;
  o.dim = kDim;
  o.num_states = 149;
  std::unique_ptr<CudaResidentModel> other = Resident(RandomModel(o, 3));
  ASSERT_NE(other, nullptr);
  const std::vector<const CudaResidentModel*> odd = {s.set[0], other.get()};
  const FusionSegment six{6, &max};
  const absl::Status mismatch = s.workspace->Enqueue(odd, s.configs, {&six, 1}, 6, false);
  EXPECT_EQ(mismatch.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(mismatch.message().find("same states and dimension"), std::string::npos) << mismatch;
  // One batch at a time.
  ASSERT_TRUE(s.workspace->Enqueue(s.set, s.configs, {&six, 1}, 6, false).ok());
  EXPECT_EQ(s.workspace->Enqueue(s.set, s.configs, {&six, 1}, 6, false).code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(s.workspace->Wait().ok());
  // Buffers no device holds are refused before anything is allocated, naming the device.
  const absl::Status huge = s.workspace->Reserve({1 << 30, kDim, 5000, 2, 0});
  EXPECT_EQ(huge.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(huge.message().find("cuda:0"), std::string::npos) << huge;
  EXPECT_NE(huge.message().find("bytes free of"), std::string::npos) << huge;
  // ... and the workspace still works.
  ASSERT_TRUE(s.workspace->Enqueue(s.set, s.configs, {&six, 1}, 6, false).ok());
  EXPECT_TRUE(s.workspace->Wait().ok());
}

TEST_F(CudaWorkspaceTest, FusedScorerRefusesModelsThatDoNotMatch) {
  std::vector<GmmModel> models = ThreeModels();
  RandomModelOptions o;
  o.dim = 13;
  models.push_back(RandomModel(o, 8));
  const auto refused = CudaFusedScorer::Create({&models[0], &models[3]}, FusionSpec());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<const GmmModel*> nine(9, &models[0]);
  EXPECT_EQ(CudaFusedScorer::Create(nine, FusionSpec()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Runs without a GPU: the list is checked against a count.
TEST(DeviceListTest, TakesAllOrDistinctNumbersBelowTheCount) {
  EXPECT_EQ(*ParseDeviceList("all", 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(*ParseDeviceList("2,0", 3), (std::vector<int>{2, 0}));
  const absl::StatusOr<std::vector<int>> missing = ParseDeviceList("0,3", 3);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("device 3 requested, 3 present"), std::string::npos)
      << missing.status();
  EXPECT_NE(ParseDeviceList("1,1", 3).status().message().find("named twice"), std::string::npos);
  for (const char* bad : {"", "x", "-1", "1,", "0;1"}) {
    EXPECT_EQ(ParseDeviceList(bad, 3).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace gmmscore

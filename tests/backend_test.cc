// The one place that chooses the backend (kernels/backend.h) and the CPU as a compute device
// (kernels/cpu/cpu_compute_device.h): flags refused with the flag named, --backend auto falling
// back to the CPU where no GPU is usable, and a CPU slot's scores equal to CpuScorer's.
#include "kernels/backend.h"

#include <gtest/gtest.h>

#include <cstring>

#include "kernels/cpu/cpu_compute_device.h"
#include "kernels/cpu/cpu_scorer.h"
#include "model/random_model.h"

namespace gmmscore {
namespace {

TEST(BackendTest, RefusesUnknownBackendsAndGpusForTheCpu) {
  const std::vector<GmmModel> models = {RandomModel({}, 1)};
  const auto unknown = MakeFusedScorers({.backend = "tpu", .program = "test"}, models, {});
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("unknown backend 'tpu'"), std::string::npos);
  const auto cpu_gpus =
      MakeComputeDevices({.backend = "cpu", .devices = "0", .program = "test"}, 1, 64);
  EXPECT_EQ(cpu_gpus.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(cpu_gpus.status().message().find("--devices 0"), std::string::npos);
}

TEST(BackendTest, CudaWithoutAUsableGpuNamesTheFlag) {
  const auto devices = MakeComputeDevices({.backend = "cuda", .program = "test"}, 1, 64);
  if (devices.ok()) GTEST_SKIP() << "a GPU is usable here: --backend cuda succeeds";
  EXPECT_TRUE(devices.status().code() == absl::StatusCode::kUnimplemented ||
              devices.status().code() == absl::StatusCode::kUnavailable)
      << devices.status();
  EXPECT_EQ(devices.status().message().rfind("--backend cuda: ", 0), 0u) << devices.status();
}

TEST(BackendTest, CpuWorkersShareOneResidency) {
  auto devices = MakeComputeDevices({.backend = "cpu", .program = "test"}, 3, 64);
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 3u);
  for (const auto& d : *devices) {
    EXPECT_EQ(d->name(), "cpu");
    EXPECT_EQ(d->residency_index(), 0);
    EXPECT_EQ(d->num_slots(), 1);
  }
}

TEST(BackendTest, AutoScoresOnTheCpuWhereNoGpuIsUsable) {
  const GmmModel model = RandomModel({}, 2);
  auto scorers = MakeFusedScorers({.backend = "auto", .program = "test"}, {model}, {});
  ASSERT_TRUE(scorers.ok()) << scorers.status();
  ASSERT_FALSE(scorers->empty());
  const Matrix feats = RandomFeatures(9, model.dim(), 0.0f, 3.0f, 3);
  Matrix got, want;
  ASSERT_TRUE((*scorers)[0]->Score(feats, &got).ok());
  ASSERT_TRUE(CpuScorer(model, 1).Score(feats, &want).ok());
  ASSERT_EQ(got.rows, want.rows);
  for (size_t i = 0; i < got.data.size(); ++i) EXPECT_NEAR(got.data[i], want.data[i], 1e-3);
}

TEST(CpuComputeDeviceTest, SlotScoresEveryModelAsCpuScorerDoes) {
  RandomModelOptions o;
  o.dim = 13;
  o.num_states = 21;
  const GmmModel a = RandomModel(o, 4), b = RandomModel(o, 5);
  CpuComputeDevice device(1, 32);
  auto ra = device.MakeResident(a), rb = device.MakeResident(b);
  ASSERT_TRUE(ra.ok() && rb.ok());
  EXPECT_EQ((*ra)->backend(), "cpu");
  EXPECT_EQ((*ra)->num_states(), 21);
  ASSERT_TRUE(device.Prepare(0, **ra).ok());
  BatchSlot& slot = device.slot(0);
  const Matrix feats = RandomFeatures(17, 13, 0.0f, 3.0f, 6);
  const ResidentModel* models[] = {ra->get(), rb->get()};
  absl::StatusOr<float*> staged = slot.Stage(models, 17);
  ASSERT_TRUE(staged.ok()) << staged.status();
  std::memcpy(*staged, feats.data.data(), feats.data.size() * sizeof(float));
  const FusionSegment whole{17, nullptr};
  ASSERT_TRUE(slot.EnqueueScores(models, {&whole, 1}, 17, false).ok());
  ASSERT_TRUE(slot.Wait().ok());
  EXPECT_EQ(slot.fused(), nullptr) << "the CPU leaves fusion to the caller";
  for (int32_t k = 0; k < 2; ++k) {
    Matrix want;
    ASSERT_TRUE(CpuScorer(k == 0 ? a : b, 1).Score(feats, &want).ok());
    for (size_t i = 0; i < want.data.size(); ++i) {
      ASSERT_EQ(slot.model_scores(k)[i], want.data[i]) << "model " << k << ", score " << i;
    }
  }
  // More frames than the slot holds are refused, not written past its end; frames not staged
  // are not scored.
  EXPECT_EQ(slot.Stage(models, 33).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(slot.EnqueueScores(models, {&whole, 1}, 17, false).code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace gmmscore

#include "kernels/cpu/cpu_compute_device.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/cpu_scorer.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

class CpuDeviceModel final : public ResidentModel {
 public:
  CpuDeviceModel(const GmmModel& model, int32_t threads)
      : scorer_(model, threads), num_gauss_(model.num_gauss()) {}

  std::string_view backend() const override { return "cpu"; }
  int32_t num_states() const override { return scorer_.num_states(); }
  int32_t dim() const override { return scorer_.dim(); }
  // The packed layout holds u and v per Gaussian and dimension plus one constant.
  int64_t bytes() const override {
    return num_gauss_ * (2 * int64_t(dim()) + 1) * int64_t(sizeof(float));
  }
  const CpuScorer& scorer() const { return scorer_; }

 private:
  const CpuScorer scorer_;
  const int64_t num_gauss_;
};

}  // namespace

class CpuComputeDevice::Slot final : public BatchSlot {
 public:
  explicit Slot(int32_t max_frames) : max_frames_(max_frames) {}

  void Grow(int32_t dim) {
    dim_ = std::max(dim_, dim);
    staged_.resize(size_t(max_frames_) * size_t(dim_));
  }
  int64_t bytes() const { return int64_t(staged_.capacity() * sizeof(float)); }

  absl::StatusOr<float*> Stage(std::span<const ResidentModel* const> models,
                               int32_t frames) override {
    if (models.empty()) return absl::InvalidArgumentError("a batch of no models");
    for (const ResidentModel* m : models) {
      if (m->backend() != "cpu") {
        return absl::InvalidArgumentError(absl::StrCat(
            "a model resident on the ", std::string(m->backend()), " given to the cpu"));
      }
    }
    const int32_t dim = models[0]->dim();
    if (frames < 0 || frames > max_frames_ || dim > dim_) {
      return absl::InvalidArgumentError(absl::StrCat(frames, " frames of ", dim,
                                                     " dims in a batch, the slot holds ",
                                                     max_frames_, " of ", dim_));
    }
    staged_frames_ = frames;
    return staged_.data();
  }
  absl::Status Wait() override { return absl::OkStatus(); }
  const float* fused() const override {
    return scores_.size() == 1 ? scores_[0].data.data() : nullptr;
  }
  const float* model_scores(int32_t k) const override { return scores_[size_t(k)].data.data(); }

  absl::Status EnqueueScores(std::span<const ResidentModel* const> models,
                             std::span<const FusionSegment> /*segments: fused by the caller*/,
                             int32_t frames, bool /*copy_model_scores: always readable*/) override {
    if (models.empty() || frames != staged_frames_) {
      return absl::FailedPreconditionError(
          absl::StrCat("enqueued ", frames, " frames, ", staged_frames_, " were staged"));
    }
    const int32_t dim = models[0]->dim();
    staged_frames_ = -1;
    feats_.Resize(frames, dim);
    std::memcpy(feats_.data.data(), staged_.data(), feats_.data.size() * sizeof(float));
    scores_.resize(models.size());
    for (size_t k = 0; k < models.size(); ++k) {
      // Safe: every CPU ResidentModel is a CpuDeviceModel (Stage checked backend()).
      const auto& model = *static_cast<const CpuDeviceModel*>(models[k]);
      GMM_RETURN_IF_ERROR(model.scorer().Score(feats_, &scores_[k]));
    }
    return absl::OkStatus();
  }

 private:
  const int32_t max_frames_;
  int32_t dim_ = 0;
  std::vector<float> staged_;
  int32_t staged_frames_ = -1;  // what Stage made room for, until it is enqueued
  Matrix feats_;
  std::vector<Matrix> scores_;
};

CpuComputeDevice::CpuComputeDevice(int32_t threads, int32_t max_frames)
    : threads_(threads), slot_(std::make_unique<Slot>(max_frames)) {}

CpuComputeDevice::~CpuComputeDevice() = default;

BatchSlot& CpuComputeDevice::slot(int32_t /*i*/) { return *slot_; }

absl::StatusOr<std::unique_ptr<ResidentModel>> CpuComputeDevice::MakeResident(
    const GmmModel& model) {
  return std::unique_ptr<ResidentModel>(std::make_unique<CpuDeviceModel>(model, threads_));
}

absl::Status CpuComputeDevice::Prepare(int32_t /*i*/, const ResidentModel& model) {
  slot_->Grow(model.dim());
  return absl::OkStatus();
}

int64_t CpuComputeDevice::buffer_bytes() const { return slot_->bytes(); }

}  // namespace gmmscore

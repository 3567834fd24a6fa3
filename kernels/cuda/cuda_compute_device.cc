#include "kernels/cuda/cuda_compute_device.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/align/cuda_viterbi.h"
#include "kernels/cuda/common/cuda_device.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// A model as a GPU device holds it: the resident layouts and the kernel choices made for them.
class CudaDeviceModel final : public ResidentModel {
 public:
  CudaDeviceModel(std::unique_ptr<CudaResidentModel> resident, int32_t max_frames)
      : resident_(std::move(resident)), chooser_(CudaKernelChoice(), max_frames) {}

  std::string_view backend() const override { return resident_->backend(); }
  int32_t num_states() const override { return resident_->num_states(); }
  int32_t dim() const override { return resident_->dim(); }
  int64_t bytes() const override { return resident_->bytes(); }
  const CudaResidentModel& resident() const { return *resident_; }
  KernelChooser& chooser() const { return chooser_; }

 private:
  const std::unique_ptr<CudaResidentModel> resident_;
  mutable KernelChooser chooser_;  // thread-safe
};

// The models of a batch as this device made them: refuses another backend's or another GPU's.
// The cast is safe once backend() says "cuda": CudaComputeDevice makes every CUDA ResidentModel.
absl::StatusOr<const CudaDeviceModel*> OwnModel(const ResidentModel& model, int device) {
  if (model.backend() != "cuda") {
    return absl::InvalidArgumentError(absl::StrCat(
        "a model resident on the ", std::string(model.backend()), " given to cuda:", device));
  }
  const auto* own = static_cast<const CudaDeviceModel*>(&model);
  if (own->resident().device() != device) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a model resident on cuda:", own->resident().device(), " given to cuda:", device));
  }
  return own;
}

}  // namespace

class CudaComputeDevice::Slot final : public BatchSlot {
 public:
  Slot(std::unique_ptr<CudaWorkspace> workspace, int32_t max_frames)
      : workspace_(std::move(workspace)), max_frames_(max_frames) {}

  CudaWorkspace& workspace() const { return *workspace_; }
  absl::Status Wait() override { return workspace_->Wait(); }
  const float* fused() const override { return workspace_->fused(); }
  absl::Status FetchFusedRows(int32_t first, int32_t rows) override {
    return workspace_->FetchFusedRows(first, rows);
  }
  const float* model_scores(int32_t k) const override { return workspace_->model_scores(k); }
  const uint16_t* encoded16() const override { return workspace_->encoded16(); }
  std::shared_ptr<const uint16_t> LendEncoded16() override { return workspace_->LendEncoded16(); }
  const int32_t* best_states() const override { return workspace_->best_states(); }
  const float* best_scores() const override { return workspace_->best_scores(); }
  BeamCandidates beam_candidates() const override { return workspace_->beam_candidates(); }

  absl::StatusOr<float*> Stage(std::span<const ResidentModel* const> models,
                               int32_t frames) override {
    if (models.empty()) return absl::InvalidArgumentError("a batch of no models");
    int64_t split_floats = 0;
    for (const ResidentModel* m : models) {
      GMM_ASSIGN_OR_RETURN(const CudaDeviceModel* own, OwnModel(*m, workspace_->device()));
      split_floats = std::max(split_floats, own->resident().SplitScratchFloats(max_frames_));
    }
    // A set of several models needs room for their scores side by side: grown at its first
    // batch, which frees the staging too, so before anything is staged.
    GMM_RETURN_IF_ERROR(workspace_->Reserve({max_frames_, models[0]->dim(), models[0]->num_states(),
                                             int32_t(models.size()), split_floats}));
    if (frames < 0 || frames > max_frames_) {
      return absl::InvalidArgumentError(
          absl::StrCat(frames, " frames in a batch, the slot holds ", max_frames_));
    }
    return workspace_->staged_feats();
  }

  absl::Status EnqueueScores(std::span<const ResidentModel* const> models,
                             std::span<const FusionSegment> segments, int32_t frames,
                             bool copy_model_scores) override {
    std::vector<const CudaResidentModel*> residents;
    std::vector<CudaKernelConfig> configs;
    for (const ResidentModel* m : models) {
      GMM_ASSIGN_OR_RETURN(const CudaDeviceModel* own, OwnModel(*m, workspace_->device()));
      residents.push_back(&own->resident());
      GMM_ASSIGN_OR_RETURN(const CudaKernelConfig config,
                           own->chooser().ConfigFor(own->resident(), frames, *workspace_));
      configs.push_back(config);
    }
    return workspace_->Enqueue(residents, configs, segments, frames, copy_model_scores);
  }

 private:
  const std::unique_ptr<CudaWorkspace> workspace_;
  const int32_t max_frames_;
};

absl::StatusOr<std::unique_ptr<CudaComputeDevice>> CudaComputeDevice::Create(int device,
                                                                             int32_t index,
                                                                             int32_t max_frames) {
  if (max_frames <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("batches of ", max_frames, " frames"));
  }
  std::unique_ptr<CudaComputeDevice> d(new CudaComputeDevice(device, index, max_frames));
  for (std::unique_ptr<Slot>& slot : d->slots_) {
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<CudaWorkspace> workspace, CudaWorkspace::Create(device));
    slot = std::make_unique<Slot>(std::move(workspace), max_frames);
  }
  return d;
}

CudaComputeDevice::CudaComputeDevice(int device, int32_t index, int32_t max_frames)
    : device_(device),
      index_(index),
      max_frames_(max_frames),
      name_(absl::StrCat("cuda:", device)) {}

CudaComputeDevice::~CudaComputeDevice() = default;

BatchSlot& CudaComputeDevice::slot(int32_t i) { return *slots_[size_t(i)]; }

absl::StatusOr<std::unique_ptr<ResidentModel>> CudaComputeDevice::MakeResident(
    const GmmModel& model) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<CudaResidentModel> resident,
                       CudaResidentModel::Create(model, CudaKernelChoice(), device_));
  return std::unique_ptr<ResidentModel>(
      std::make_unique<CudaDeviceModel>(std::move(resident), max_frames_));
}

absl::Status CudaComputeDevice::Prepare(int32_t i, const ResidentModel& model) {
  GMM_ASSIGN_OR_RETURN(const CudaDeviceModel* own, OwnModel(model, device_));
  const CudaResidentModel& resident = own->resident();
  CudaWorkspace& workspace = slots_[size_t(i)]->workspace();
  GMM_RETURN_IF_ERROR(workspace.Reserve({max_frames_, resident.dim(), resident.num_states(), 1,
                                         resident.SplitScratchFloats(max_frames_)}));
  // Made once per model (the chooser remembers): no batch waits for the autotune.
  return own->chooser().ChooseForEveryBucket(resident, workspace);
}

int64_t CudaComputeDevice::buffer_bytes() const {
  int64_t bytes = 0;
  for (const auto& slot : slots_) bytes += slot->workspace().device_bytes();
  return bytes;
}

absl::StatusOr<std::unique_ptr<BatchViterbi>> CudaComputeDevice::MakeViterbi() {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<CudaViterbi> viterbi, CudaViterbi::Create(device_));
  return std::unique_ptr<BatchViterbi>(std::move(viterbi));
}

}  // namespace gmmscore

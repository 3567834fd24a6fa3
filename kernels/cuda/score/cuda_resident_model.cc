#include "kernels/cuda/score/cuda_resident_model.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/common/cuda_device.h"
#include "kernels/cuda/score/score_guard_kernel.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

bool IsTensor(const CudaKernelConfig& config) { return config.kind != CudaKernelKind::kSimt; }

// The tensor kind the launches may use (kSimt: none).
CudaKernelKind TensorKindUsed(const CudaKernelChoice& choice) {
  return choice.fixed ? choice.fixed->kind : TensorKindOf(choice.mode);
}

// Whether the tensor kernel's layout is built where the kernel takes the model, and whether the
// plan fails without it.
bool WantsTensor(const CudaKernelChoice& choice) {
  return choice.all_tensor_kinds || TensorKindUsed(choice) != CudaKernelKind::kSimt;
}
bool NeedsTensor(const CudaKernelChoice& choice) {
  return choice.fixed
             ? IsTensor(*choice.fixed)
             : choice.mode != CudaKernelMode::kSimt && choice.mode != CudaKernelMode::kAuto;
}

TensorRowFormats FormatsFor(const CudaKernelChoice& choice) {
  if (choice.all_tensor_kinds) return {};
  const CudaKernelKind kind = TensorKindUsed(choice);
  return {.tf32 = kind == CudaKernelKind::kTensor3xTf32 || kind == CudaKernelKind::kTensor1xTf32,
          .f16 = kind == CudaKernelKind::kTensor3xF16};
}

bool HasRowsFor(const TensorModelView& view, CudaKernelKind kind) {
  return kind == CudaKernelKind::kTensor3xF16 ? view.rows_f16 != nullptr : view.rows != nullptr;
}

}  // namespace

int64_t CudaResidentModel::Layouts::device_bytes() const {
  return simt.device_bytes() + (tensor ? tensor->device_bytes() : 0);
}

int64_t CudaResidentModel::Layouts::split_slots() const {
  return std::max<int64_t>(int64_t(simt.num_groups) * kGroupStates,
                           tensor ? tensor->num_slots() : 0);
}

absl::StatusOr<CudaResidentModel::Layouts> CudaResidentModel::Plan(const GmmModel& model,
                                                                   const CudaKernelChoice& choice) {
  if (const std::optional<CudaKernelConfig>& fixed = choice.fixed;
      fixed && (fixed->splits < 1 || fixed->splits > kMaxSplits ||
                (IsTensor(*fixed) &&
                 (fixed->frame_tiles < 1 || fixed->frame_tiles > kTensorMaxFrameTiles)))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no such kernel blocking: ", ToString(*fixed), " (at most ", 16 * kTensorMaxFrameTiles,
        " frames a tensor-kernel block and ", kMaxSplits, " splits)"));
  }
  Layouts layouts;
  layouts.guard_scale = choice.guard_scale;
  GMM_ASSIGN_OR_RETURN(layouts.simt, BuildCudaModelLayout(model));
  if (WantsTensor(choice) && TensorKernelSupports(model.dim(), model.num_states())) {
    GMM_ASSIGN_OR_RETURN(layouts.tensor,
                         BuildTensorModelLayout(model, layouts.simt.shift, FormatsFor(choice)));
  } else if (NeedsTensor(choice)) {
    return BuildTensorModelLayout(model, layouts.simt.shift).status();  // says why not
  }
  return layouts;
}

absl::StatusOr<std::unique_ptr<CudaResidentModel>> CudaResidentModel::Upload(const Layouts& layouts,
                                                                             int device) {
  GMM_RETURN_IF_ERROR(SelectDevice(device));
  std::unique_ptr<CudaResidentModel> resident(new CudaResidentModel());
  resident->device_ = device;
  resident->shift_ = layouts.simt.shift;
  GMM_ASSIGN_OR_RETURN(resident->packed_, CudaPackedModel::Upload(layouts.simt));
  GMM_ASSIGN_OR_RETURN(resident->kernel_, SimtKernel::Create(layouts.simt.dim));
  if (layouts.tensor) {
    GMM_ASSIGN_OR_RETURN(resident->tensor_packed_, TensorPackedModel::Upload(*layouts.tensor));
    GMM_ASSIGN_OR_RETURN(resident->tensor_kernel_, TensorKernel::Create(layouts.simt.dim));
  }
  resident->split_slots_ = layouts.split_slots();
  resident->guard_scale_ = layouts.guard_scale;
  const CudaModelLayout& simt = layouts.simt;
  for (int kind = 0; kind < kKinds; ++kind) {
    const float gamma = GuardGamma(static_cast<CudaKernelKind>(kind)) * layouts.guard_scale;
    std::vector<int32_t> watched;
    for (int32_t s = 0; s < simt.num_states; ++s) {
      if (simt.outlier_begin[size_t(s) + 1] > simt.outlier_begin[size_t(s)] ||
          (gamma > 0.0f && GuardCanFire(simt.guards[size_t(s)], gamma))) {
        watched.push_back(s);
      }
    }
    GMM_ASSIGN_OR_RETURN(resident->watched_[size_t(kind)], UploadToDevice(watched));
  }
  return resident;
}

absl::StatusOr<std::unique_ptr<CudaResidentModel>> CudaResidentModel::Create(
    const GmmModel& model, const CudaKernelChoice& choice, int device) {
  GMM_ASSIGN_OR_RETURN(const Layouts layouts, Plan(model, choice));
  GMM_RETURN_IF_ERROR(SelectDevice(device));
  GMM_RETURN_IF_ERROR(
      CheckDeviceRoom(device, layouts.device_bytes(),
                      absl::StrCat("the model (", layouts.device_bytes(), " bytes) needs")));
  return Upload(layouts, device);
}

int64_t CudaResidentModel::bytes() const {
  int64_t watched_bytes = 0;
  for (const DeviceArray<int32_t>& watched : watched_) watched_bytes += int64_t(watched.bytes());
  return packed_.device_bytes() + (tensor_packed_ ? tensor_packed_->device_bytes() : 0) +
         watched_bytes;
}

bool CudaResidentModel::HasKind(CudaKernelKind kind) const {
  return kind == CudaKernelKind::kSimt ||
         (tensor_kernel_ && HasRowsFor(tensor_packed_->view(), kind));
}

std::string CudaResidentModel::KernelSummary() const {
  return absl::StrCat("SIMT: ", kernel_.Summary(),
                      "; tensor: ", tensor_kernel_ ? tensor_kernel_->Summary() : "not built");
}

int64_t CudaResidentModel::SplitScratchFloats(int32_t frames) const {
  return gmmscore::SplitScratchFloats(frames, split_slots_);
}

absl::Status CudaResidentModel::Launch(const CudaKernelConfig& config, const float* device_feats,
                                       int32_t frames, float* device_out, float* split_scratch,
                                       cudaStream_t stream) const {
  if (frames < 0) return absl::InvalidArgumentError(absl::StrCat(frames, " frames in a launch"));
  if (!HasKind(config.kind)) {
    return absl::FailedPreconditionError(
        absl::StrCat(ToString(config), ": this model has no such kernel or its rows resident"));
  }
  if (!IsTensor(config)) {
    GMM_RETURN_IF_ERROR(kernel_.Launch(packed_.view(), device_feats, frames, config.splits,
                                       split_scratch, device_out, stream));
  } else {
    GMM_RETURN_IF_ERROR(tensor_kernel_->Launch(tensor_packed_->view(), device_feats, frames, config,
                                               split_scratch, device_out, stream));
  }
  const DeviceArray<int32_t>& watched = watched_[static_cast<size_t>(config.kind)];
  return GuardScores(packed_.view(), packed_.guard_view(), watched.get(),
                     static_cast<int32_t>(watched.size()), device_feats, frames,
                     GuardGamma(config.kind) * guard_scale_, device_out, stream);
}

}  // namespace gmmscore

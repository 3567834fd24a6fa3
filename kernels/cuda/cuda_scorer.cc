#include "kernels/cuda/cuda_scorer.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/cpu_scorer.h"  // CheckFeatures

namespace gmmscore {
namespace {

absl::Status SelectDevice(int device) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    return absl::UnavailableError(absl::StrCat("no usable CUDA device: ", cudaGetErrorName(error),
                                               " (", cudaGetErrorString(error), ")"));
  }
  if (device < 0 || device >= count) {
    return absl::UnavailableError(
        absl::StrCat("CUDA device ", device, " requested, ", count, " present"));
  }
  GMM_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  return absl::OkStatus();
}

// Refuses, before anything is allocated, a model that does not fit the device or the budget.
absl::Status CheckFits(int device, int64_t model_bytes, int64_t staging_bytes, int32_t max_frames,
                       int64_t budget) {
  size_t free = 0;
  size_t total = 0;
  GMM_CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free, &total));
  const int64_t needed = model_bytes + staging_bytes;
  const int64_t available = budget > 0 ? std::min<int64_t>(budget, int64_t(free)) : int64_t(free);
  if (needed <= available) return absl::OkStatus();
  cudaDeviceProp prop;
  GMM_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, device));
  return absl::ResourceExhaustedError(absl::StrCat(
      "the model needs ", needed, " bytes of device memory (", model_bytes, " for the model, ",
      staging_bytes, " for buffers of ", max_frames, " frames) but CUDA device ", device, " (",
      prop.name, ") has ", free, " bytes free of ", total,
      budget > 0 ? absl::StrCat(", and the memory budget is ", budget, " bytes") : ""));
}

}  // namespace

absl::StatusOr<std::unique_ptr<CudaScorer>> CudaScorer::Create(const GmmModel& model,
                                                               const CudaScorerOptions& options) {
  if (options.max_frames <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_frames must be positive, is ", options.max_frames));
  }
  GMM_RETURN_IF_ERROR(SelectDevice(options.device));
  GMM_ASSIGN_OR_RETURN(const CudaModelLayout layout, BuildCudaModelLayout(model));
  const int64_t staging_bytes =
      int64_t(options.max_frames) * (layout.dim + layout.num_states) * int64_t(sizeof(float));
  GMM_RETURN_IF_ERROR(CheckFits(options.device, layout.device_bytes(), staging_bytes,
                                options.max_frames, options.memory_budget_bytes));

  std::unique_ptr<CudaScorer> scorer(new CudaScorer());
  scorer->device_ = options.device;
  scorer->max_frames_ = options.max_frames;
  scorer->poison_output_ = options.poison_output;
  GMM_ASSIGN_OR_RETURN(scorer->packed_, CudaPackedModel::Upload(layout));
  GMM_ASSIGN_OR_RETURN(scorer->kernel_, SimtKernel::Create(layout.dim));
  const size_t feat_floats = size_t(options.max_frames) * layout.dim;
  const size_t score_floats = size_t(options.max_frames) * layout.num_states;
  GMM_ASSIGN_OR_RETURN(scorer->device_feats_, DeviceArray<float>::Allocate(feat_floats));
  GMM_ASSIGN_OR_RETURN(scorer->device_scores_, DeviceArray<float>::Allocate(score_floats));
  GMM_ASSIGN_OR_RETURN(scorer->pinned_feats_, PinnedArray<float>::Allocate(feat_floats));
  GMM_ASSIGN_OR_RETURN(scorer->pinned_scores_, PinnedArray<float>::Allocate(score_floats));
  GMM_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&scorer->stream_, cudaStreamNonBlocking));
  return scorer;
}

CudaScorer::~CudaScorer() {
  if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
}

int64_t CudaScorer::device_bytes() const {
  return packed_.device_bytes() + int64_t(device_feats_.bytes() + device_scores_.bytes());
}

absl::Status CudaScorer::Enqueue(const float* host_feats, int32_t frames, float* host_out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  GMM_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
  return EnqueueLocked(host_feats, frames, host_out);
}

absl::Status CudaScorer::EnqueueLocked(const float* host_feats, int32_t frames,
                                       float* host_out) const {
  if (frames < 0 || frames > max_frames_) {
    return absl::InvalidArgumentError(
        absl::StrCat(frames, " frames in one launch, at most ", max_frames_));
  }
  if (frames == 0) return absl::OkStatus();
  const size_t feat_bytes = size_t(frames) * dim() * sizeof(float);
  const size_t score_bytes = size_t(frames) * num_states() * sizeof(float);
  GMM_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(device_feats_.get(), host_feats, feat_bytes,
                                           cudaMemcpyHostToDevice, stream_));
  if (poison_output_) {
    // All bits set is a NaN.
    GMM_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(device_scores_.get(), 0xff, score_bytes, stream_));
  }
  GMM_RETURN_IF_ERROR(
      kernel_.Launch(packed_.view(), device_feats_.get(), frames, device_scores_.get(), stream_));
  GMM_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(host_out, device_scores_.get(), score_bytes,
                                           cudaMemcpyDeviceToHost, stream_));
  return absl::OkStatus();
}

absl::Status CudaScorer::Score(const Matrix& feats, Matrix* out) const {
  GMM_RETURN_IF_ERROR(CheckFeatures(feats, dim()));
  out->Resize(feats.rows, num_states());
  std::lock_guard<std::mutex> lock(mutex_);
  GMM_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
  for (int32_t first = 0; first < feats.rows; first += max_frames_) {
    const int32_t frames = std::min(max_frames_, feats.rows - first);
    std::memcpy(pinned_feats_.get(), feats.row(first), size_t(frames) * dim() * sizeof(float));
    GMM_RETURN_IF_ERROR(EnqueueLocked(pinned_feats_.get(), frames, pinned_scores_.get()));
    // A fault inside the kernel surfaces here.
    GMM_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
    std::memcpy(out->row(first), pinned_scores_.get(),
                size_t(frames) * num_states() * sizeof(float));
  }
  return absl::OkStatus();
}

}  // namespace gmmscore

#include "kernels/cuda/cuda_scorer.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/cpu_scorer.h"  // CheckFeatures
#include "kernels/cuda/cuda_device.h"

namespace gmmscore {
namespace {

bool IsTensor(const CudaKernelConfig& config) { return config.kind != CudaKernelKind::kSimt; }

// The tensor kind the scorer's launches may use (kSimt: none).
CudaKernelKind TensorKindUsed(const CudaScorerOptions& options) {
  return options.fixed_config ? options.fixed_config->kind : TensorKindOf(options.kernel_mode);
}

// Whether the scorer builds the tensor kernel's layout where the kernel takes the model, and
// whether it fails without it.
bool WantsTensor(const CudaScorerOptions& options) {
  return options.all_tensor_kinds || TensorKindUsed(options) != CudaKernelKind::kSimt;
}
bool NeedsTensor(const CudaScorerOptions& options) {
  return options.fixed_config ? IsTensor(*options.fixed_config)
                              : options.kernel_mode != CudaKernelMode::kSimt &&
                                    options.kernel_mode != CudaKernelMode::kAuto;
}

TensorRowFormats FormatsFor(const CudaScorerOptions& options) {
  if (options.all_tensor_kinds) return {};
  const CudaKernelKind kind = TensorKindUsed(options);
  return {.tf32 = kind == CudaKernelKind::kTensor3xTf32 || kind == CudaKernelKind::kTensor1xTf32,
          .f16 = kind == CudaKernelKind::kTensor3xF16};
}

bool HasRowsFor(const TensorModelView& view, CudaKernelKind kind) {
  return kind == CudaKernelKind::kTensor3xF16 ? view.rows_f16 != nullptr : view.rows != nullptr;
}

// Frames of the kind the scorer sees (shifted features of MFCC-like spread), never zeros: the
// autotune times the kernels on these.
std::vector<float> SyntheticFrames(int32_t frames, const std::vector<float>& shift) {
  std::mt19937 rng(20261121);
  std::normal_distribution<float> normal(0.0f, 2.5f);
  std::vector<float> feats(size_t(frames) * shift.size());
  for (size_t i = 0; i < feats.size(); ++i) feats[i] = shift[i % shift.size()] + normal(rng);
  return feats;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CudaScorer>> CudaScorer::Create(const GmmModel& model,
                                                               const CudaScorerOptions& options) {
  if (options.max_frames <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_frames must be positive, is ", options.max_frames));
  }
  if (const std::optional<CudaKernelConfig>& fixed = options.fixed_config;
      fixed && (fixed->splits < 1 || fixed->splits > kMaxSplits ||
                (IsTensor(*fixed) &&
                 (fixed->frame_tiles < 1 || fixed->frame_tiles > kTensorMaxFrameTiles)))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no such kernel blocking: ", ToString(*fixed), " (at most ", 16 * kTensorMaxFrameTiles,
        " frames a tensor-kernel block and ", kMaxSplits, " splits)"));
  }
  GMM_RETURN_IF_ERROR(SelectDevice(options.device));
  GMM_ASSIGN_OR_RETURN(const CudaModelLayout layout, BuildCudaModelLayout(model));
  std::optional<TensorModelLayout> tensor_layout;
  if (WantsTensor(options) && TensorKernelSupports(model.dim(), model.num_states())) {
    GMM_ASSIGN_OR_RETURN(tensor_layout,
                         BuildTensorModelLayout(model, layout.shift, FormatsFor(options)));
  } else if (NeedsTensor(options)) {
    return BuildTensorModelLayout(model, layout.shift).status();  // says why not
  }
  // Both kernels' split launches share the scratch: sized for the layout of more slots.
  const int64_t split_slots = std::max<int64_t>(int64_t(layout.num_groups) * kGroupStates,
                                                tensor_layout ? tensor_layout->num_slots() : 0);
  const size_t split_floats = size_t(SplitScratchFloats(options.max_frames, split_slots));
  const int64_t model_bytes =
      layout.device_bytes() + (tensor_layout ? tensor_layout->device_bytes() : 0);
  const int64_t staging_bytes =
      int64_t(options.max_frames) * (layout.dim + layout.num_states) * int64_t(sizeof(float)) +
      int64_t(split_floats * sizeof(float));
  GMM_RETURN_IF_ERROR(
      CheckDeviceRoom(options.device, model_bytes + staging_bytes,
                      absl::StrCat("the model (", model_bytes, " bytes) and its buffers of ",
                                   options.max_frames, " frames (", staging_bytes, " bytes) need"),
                      options.memory_budget_bytes));

  std::unique_ptr<CudaScorer> scorer(new CudaScorer());
  scorer->device_ = options.device;
  scorer->max_frames_ = options.max_frames;
  scorer->poison_output_ = options.poison_output;
  scorer->mode_ = options.kernel_mode;
  scorer->fixed_config_ = options.fixed_config;
  GMM_ASSIGN_OR_RETURN(scorer->packed_, CudaPackedModel::Upload(layout));
  GMM_ASSIGN_OR_RETURN(scorer->kernel_, SimtKernel::Create(layout.dim));
  if (tensor_layout) {
    GMM_ASSIGN_OR_RETURN(scorer->tensor_packed_, TensorPackedModel::Upload(*tensor_layout));
    GMM_ASSIGN_OR_RETURN(scorer->tensor_kernel_, TensorKernel::Create(layout.dim));
  }
  scorer->split_slots_ = split_slots;
  GMM_ASSIGN_OR_RETURN(scorer->split_scratch_, DeviceArray<float>::Allocate(split_floats));
  const size_t feat_floats = size_t(options.max_frames) * layout.dim;
  const size_t score_floats = size_t(options.max_frames) * layout.num_states;
  GMM_ASSIGN_OR_RETURN(scorer->device_feats_, DeviceArray<float>::Allocate(feat_floats));
  GMM_ASSIGN_OR_RETURN(scorer->device_scores_, DeviceArray<float>::Allocate(score_floats));
  GMM_ASSIGN_OR_RETURN(scorer->pinned_feats_, PinnedArray<float>::Allocate(feat_floats));
  GMM_ASSIGN_OR_RETURN(scorer->pinned_scores_, PinnedArray<float>::Allocate(score_floats));
  scorer->tune_feats_ = SyntheticFrames(options.max_frames, layout.shift);
  GMM_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&scorer->stream_, cudaStreamNonBlocking));
  return scorer;
}

CudaScorer::~CudaScorer() {
  if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
}

std::string CudaScorer::name() const {
  if (fixed_config_) return "cuda-" + ToString(*fixed_config_);
  switch (mode_) {
    case CudaKernelMode::kAuto:
      return "cuda-auto";
    case CudaKernelMode::kSimt:
      return "cuda-simt";
    case CudaKernelMode::kTensor:
      return "cuda-tensor";
    case CudaKernelMode::kTensorFast:
      return "cuda-tensor-fast";
    case CudaKernelMode::kTensorTf32:
      return "cuda-tensor-tf32";
  }
  return "cuda";
}

std::string CudaScorer::KernelSummary() const {
  return absl::StrCat("SIMT: ", kernel_.Summary(),
                      "; tensor: ", tensor_kernel_ ? tensor_kernel_->Summary() : "not built");
}

int64_t CudaScorer::device_bytes() const {
  return packed_.device_bytes() + (tensor_packed_ ? tensor_packed_->device_bytes() : 0) +
         int64_t(device_feats_.bytes() + device_scores_.bytes() + split_scratch_.bytes());
}

absl::StatusOr<CudaKernelConfig> CudaScorer::ConfigFor(int32_t frames) const {
  std::lock_guard<std::mutex> lock(mutex_);
  GMM_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
  return ConfigForLocked(frames);
}

absl::StatusOr<CudaKernelConfig> CudaScorer::Tune(int32_t frames, CudaKernelMode mode) const {
  std::lock_guard<std::mutex> lock(mutex_);
  GMM_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
  return TuneLocked(frames, mode);
}

std::optional<CudaKernelConfig> CudaScorer::ChosenConfig(int32_t frames) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fixed_config_) return fixed_config_;
  return chosen_[int(mode_)][ShapeBucket(frames)];
}

absl::StatusOr<CudaKernelConfig> CudaScorer::ConfigForLocked(int32_t frames) const {
  if (fixed_config_) return *fixed_config_;
  return TuneLocked(frames, mode_);
}

absl::StatusOr<CudaKernelConfig> CudaScorer::TuneLocked(int32_t frames, CudaKernelMode mode) const {
  if (frames < 1 || frames > max_frames_) {
    return absl::InvalidArgumentError(
        absl::StrCat("no kernel choice for ", frames, " frames, at most ", max_frames_));
  }
  if (mode != CudaKernelMode::kSimt && mode != CudaKernelMode::kAuto &&
      !HasKind(TensorKindOf(mode))) {
    return absl::FailedPreconditionError(
        absl::StrCat("this scorer has no ", KindName(TensorKindOf(mode)), " kernel or its rows"));
  }
  std::optional<CudaKernelConfig>& chosen = chosen_[int(mode)][ShapeBucket(frames)];
  if (chosen) return *chosen;
  // The bucket's largest launch that fits the buffers, on synthetic frames: the device buffers
  // are free between calls, and the caller's frames are copied in after this.
  const int32_t tune_frames =
      static_cast<int32_t>(std::min<int64_t>(max_frames_, int64_t(1) << ShapeBucket(frames)));
  const std::vector<CudaKernelConfig> candidates =
      AutotuneCandidates(mode, HasKind(TensorKindOf(mode)), tune_frames);
  if (candidates.size() > 1) {
    GMM_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(device_feats_.get(), tune_feats_.data(),
                                             size_t(tune_frames) * dim() * sizeof(float),
                                             cudaMemcpyHostToDevice, stream_));
  }
  GMM_ASSIGN_OR_RETURN(
      chosen, PickFastest(candidates, stream_, [&](const CudaKernelConfig& config) {
        return Launch(config, device_feats_.get(), tune_frames, device_scores_.get());
      }));
  return *chosen;
}

absl::Status CudaScorer::CheckConfig(const CudaKernelConfig& config, int32_t frames) const {
  if (frames < 0 || frames > max_frames_) {
    return absl::InvalidArgumentError(
        absl::StrCat(frames, " frames in one launch, at most ", max_frames_));
  }
  if (!HasKind(config.kind)) {
    return absl::FailedPreconditionError(
        absl::StrCat(ToString(config), ": this scorer has no such kernel or its rows"));
  }
  return absl::OkStatus();
}

bool CudaScorer::HasKind(CudaKernelKind kind) const {
  return kind == CudaKernelKind::kSimt ||
         (tensor_kernel_ && HasRowsFor(tensor_packed_->view(), kind));
}

absl::Status CudaScorer::Launch(const CudaKernelConfig& config, const float* device_feats,
                                int32_t frames, float* device_out) const {
  return LaunchOn(config, device_feats, frames, device_out, split_scratch_.get(), stream_);
}

int64_t CudaScorer::split_scratch_floats(int32_t frames) const {
  return SplitScratchFloats(frames, split_slots_);
}

absl::Status CudaScorer::LaunchOn(const CudaKernelConfig& config, const float* device_feats,
                                  int32_t frames, float* device_out, float* split_scratch,
                                  cudaStream_t stream) const {
  GMM_RETURN_IF_ERROR(CheckConfig(config, frames));
  if (!IsTensor(config)) {
    return kernel_.Launch(packed_.view(), device_feats, frames, config.splits, split_scratch,
                          device_out, stream);
  }
  return tensor_kernel_->Launch(tensor_packed_->view(), device_feats, frames, config, split_scratch,
                                device_out, stream);
}

absl::Status CudaScorer::Enqueue(const float* host_feats, int32_t frames, float* host_out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  GMM_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
  GMM_RETURN_IF_ERROR(CheckConfig({}, frames));
  if (frames == 0) return absl::OkStatus();
  GMM_ASSIGN_OR_RETURN(const CudaKernelConfig config, ConfigForLocked(frames));
  return EnqueueLocked(config, host_feats, frames, host_out);
}

absl::Status CudaScorer::Enqueue(const CudaKernelConfig& config, const float* host_feats,
                                 int32_t frames, float* host_out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  GMM_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
  return EnqueueLocked(config, host_feats, frames, host_out);
}

absl::Status CudaScorer::EnqueueDevice(const CudaKernelConfig& config, const float* device_feats,
                                       int32_t frames, float* device_out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  GMM_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
  return Launch(config, device_feats, frames, device_out);
}

absl::Status CudaScorer::EnqueueLocked(const CudaKernelConfig& config, const float* host_feats,
                                       int32_t frames, float* host_out) const {
  GMM_RETURN_IF_ERROR(CheckConfig(config, frames));
  if (frames == 0) return absl::OkStatus();
  const size_t feat_bytes = size_t(frames) * dim() * sizeof(float);
  const size_t score_bytes = size_t(frames) * num_states() * sizeof(float);
  GMM_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(device_feats_.get(), host_feats, feat_bytes,
                                           cudaMemcpyHostToDevice, stream_));
  if (poison_output_) {
    // All bits set is a NaN.
    GMM_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(device_scores_.get(), 0xff, score_bytes, stream_));
  }
  GMM_RETURN_IF_ERROR(Launch(config, device_feats_.get(), frames, device_scores_.get()));
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
    GMM_ASSIGN_OR_RETURN(const CudaKernelConfig config, ConfigForLocked(frames));
    std::memcpy(pinned_feats_.get(), feats.row(first), size_t(frames) * dim() * sizeof(float));
    GMM_RETURN_IF_ERROR(EnqueueLocked(config, pinned_feats_.get(), frames, pinned_scores_.get()));
    // A fault inside the kernel surfaces here.
    GMM_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
    std::memcpy(out->row(first), pinned_scores_.get(),
                size_t(frames) * num_states() * sizeof(float));
  }
  return absl::OkStatus();
}

}  // namespace gmmscore

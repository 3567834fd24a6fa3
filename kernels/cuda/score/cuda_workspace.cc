#include "kernels/cuda/score/cuda_workspace.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/common/cuda_device.h"
#include "kernels/cuda/common/cuda_status.h"

namespace gmmscore {
namespace {

DeviceFusionRule ToDevice(FusionRule rule) {
  switch (rule) {
    case FusionRule::kLogLinear:
      return DeviceFusionRule::kLogLinear;
    case FusionRule::kLogAdd:
      return DeviceFusionRule::kLogAdd;
    default:
      return DeviceFusionRule::kMax;
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<CudaWorkspace>> CudaWorkspace::Create(int device,
                                                                     bool poison_output) {
  GMM_RETURN_IF_ERROR(SelectDevice(device));
  std::unique_ptr<CudaWorkspace> workspace(new CudaWorkspace(device, poison_output));
  GMM_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&workspace->stream_, cudaStreamNonBlocking));
  return workspace;
}

CudaWorkspace::~CudaWorkspace() {
  if (stream_ == nullptr) return;
  // The buffers are freed after this; nothing may still be writing them.
  (void)cudaSetDevice(device_);
  (void)cudaStreamSynchronize(stream_);
  (void)cudaStreamDestroy(stream_);
}

absl::Status CudaWorkspace::Reserve(const WorkspaceCapacity& want) {
  if (in_flight_) return absl::FailedPreconditionError("Reserve while a batch is in flight");
  WorkspaceCapacity c = capacity_;
  c.frames = std::max(c.frames, want.frames);
  c.dim = std::max(c.dim, want.dim);
  c.states = std::max(c.states, want.states);
  c.models = std::max(c.models, want.models);
  c.split_floats = std::max(c.split_floats, want.split_floats);
  if (c.frames == capacity_.frames && c.dim == capacity_.dim && c.states == capacity_.states &&
      c.models == capacity_.models && c.split_floats == capacity_.split_floats) {
    return absl::OkStatus();
  }
  if (c.models > kMaxFusedModels) {
    return absl::InvalidArgumentError(
        absl::StrCat(c.models, " models in a set, at most ", kMaxFusedModels, " on the device"));
  }
  const int64_t bytes = DeviceBytesFor(c);
  GMM_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
  // The old buffers are freed before the new ones are allocated: only the growth must fit.
  GMM_RETURN_IF_ERROR(CheckDeviceRoom(
      device_, bytes - DeviceBytesFor(capacity_),
      absl::StrCat("buffers for batches of ", c.frames, " frames of ", c.models, " model",
                   c.models > 1 ? "s" : "", " x ", c.states, " states need")));
  // Freed first; should an allocation still fail, the workspace holds nothing and says so.
  capacity_ = WorkspaceCapacity();
  device_bytes_ = int64_t(select_recent_.bytes() + select_sums_.bytes());
  device_feats_ = {};
  device_fused_ = {};
  device_models_ = {};
  split_scratch_ = {};
  device_segments_ = {};
  device_frame_segment_ = {};
  frame_best_ = {};
  window_sums_ = {};
  pinned_feats_ = {};
  pinned_fused_ = {};
  pinned_models_ = {};
  pinned_segments_ = {};
  pinned_frame_segment_ = {};
  device_modes_ = {};
  device_encoded_ = {};
  device_best_score_ = {};
  device_best_state_ = {};
  pinned_modes_ = {};
  encoded_buffer_ = {};
  encoded_pool_ = {};
  pinned_best_score_ = {};
  pinned_best_state_ = {};
  device_beams_ = {};
  pinned_beams_ = {};
  const size_t frames = size_t(c.frames);
  const size_t scores = frames * size_t(c.states);
  const size_t several = c.models > 1 ? size_t(c.models) : 0;
  GMM_ASSIGN_OR_RETURN(device_feats_, DeviceArray<float>::Allocate(frames * size_t(c.dim)));
  GMM_ASSIGN_OR_RETURN(device_fused_, DeviceArray<float>::Allocate(scores));
  GMM_ASSIGN_OR_RETURN(device_models_, DeviceArray<float>::Allocate(several * scores));
  GMM_ASSIGN_OR_RETURN(split_scratch_, DeviceArray<float>::Allocate(size_t(c.split_floats)));
  GMM_ASSIGN_OR_RETURN(device_segments_, DeviceArray<DeviceFusionSegment>::Allocate(frames));
  GMM_ASSIGN_OR_RETURN(device_frame_segment_, DeviceArray<int32_t>::Allocate(frames));
  GMM_ASSIGN_OR_RETURN(frame_best_, DeviceArray<float>::Allocate(several * frames));
  GMM_ASSIGN_OR_RETURN(window_sums_, DeviceArray<double>::Allocate(several * frames));
  GMM_ASSIGN_OR_RETURN(pinned_feats_, PinnedArray<float>::Allocate(frames * size_t(c.dim)));
  GMM_ASSIGN_OR_RETURN(pinned_fused_, PinnedArray<float>::Allocate(scores));
  GMM_ASSIGN_OR_RETURN(pinned_models_, PinnedArray<float>::Allocate(several * scores));
  GMM_ASSIGN_OR_RETURN(pinned_segments_, PinnedArray<DeviceFusionSegment>::Allocate(frames));
  GMM_ASSIGN_OR_RETURN(pinned_frame_segment_, PinnedArray<int32_t>::Allocate(frames));
  GMM_ASSIGN_OR_RETURN(device_modes_, DeviceArray<DeviceRowEncoding>::Allocate(frames));
  GMM_ASSIGN_OR_RETURN(device_encoded_, DeviceArray<uint16_t>::Allocate(scores));
  GMM_ASSIGN_OR_RETURN(device_best_score_, DeviceArray<float>::Allocate(frames));
  GMM_ASSIGN_OR_RETURN(device_best_state_, DeviceArray<int32_t>::Allocate(frames));
  GMM_ASSIGN_OR_RETURN(pinned_modes_, PinnedArray<DeviceRowEncoding>::Allocate(frames));
  if (scores > 0) {
    encoded_pool_ = PinnedBufferPool::Create(scores * sizeof(uint16_t), 1 + kLentEncodedBuffers);
    encoded_buffer_ = encoded_pool_->TryTake();
    if (encoded_buffer_ == nullptr) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "cuda:", device_, ": cannot pin ", scores * sizeof(uint16_t), " bytes of 16-bit rows"));
    }
  }
  GMM_ASSIGN_OR_RETURN(pinned_best_score_, PinnedArray<float>::Allocate(frames));
  GMM_ASSIGN_OR_RETURN(pinned_best_state_, PinnedArray<int32_t>::Allocate(frames));
  GMM_ASSIGN_OR_RETURN(device_beams_, DeviceArray<float>::Allocate(frames));
  GMM_ASSIGN_OR_RETURN(pinned_beams_, PinnedArray<float>::Allocate(frames));
  capacity_ = c;
  device_bytes_ += bytes;
  return absl::OkStatus();
}

const float* CudaWorkspace::model_scores(int32_t k) const {
  if (!last_copied_models_) return fused();
  return pinned_models_.get() + size_t(k) * size_t(last_frames_) * size_t(last_states_);
}

int64_t CudaWorkspace::DeviceBytesFor(const WorkspaceCapacity& c) {
  const int64_t frames = c.frames;
  const int64_t scores = frames * c.states * int64_t(sizeof(float));
  const int64_t several = c.models > 1 ? c.models : 0;
  return frames * c.dim * int64_t(sizeof(float)) + scores + several * scores +
         several * frames * int64_t(sizeof(float) + sizeof(double)) +
         c.split_floats * int64_t(sizeof(float)) +
         frames * int64_t(sizeof(DeviceFusionSegment) + sizeof(int32_t)) +
         frames * c.states * int64_t(sizeof(uint16_t)) +
         frames * int64_t(sizeof(DeviceRowEncoding) + 2 * sizeof(float) + sizeof(int32_t));
}

absl::StatusOr<CudaWorkspace::Borrowed> CudaWorkspace::Borrow() const {
  if (in_flight_) {
    return absl::FailedPreconditionError("a batch is in flight on this workspace: Wait first");
  }
  return Borrowed{device_feats_.get(), device_fused_.get(), split_scratch_.get(), stream_};
}

absl::Status CudaWorkspace::CheckBatch(std::span<const CudaResidentModel* const> models,
                                       std::span<const CudaKernelConfig> configs,
                                       std::span<const FusionSegment> segments,
                                       int32_t frames) const {
  if (in_flight_) {
    return absl::FailedPreconditionError("a batch is in flight on this workspace: Wait first");
  }
  if (models.empty() || int32_t(models.size()) > capacity_.models) {
    return absl::InvalidArgumentError(absl::StrCat(models.size(), " models in a batch, the ",
                                                   "workspace holds 1 to ", capacity_.models));
  }
  if (configs.size() != models.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(configs.size(), " kernel configurations for ", models.size(), " models"));
  }
  if (frames < 0 || frames > capacity_.frames) {
    return absl::InvalidArgumentError(
        absl::StrCat(frames, " frames in a batch, the workspace holds ", capacity_.frames));
  }
  const CudaResidentModel& first = *models.front();
  for (const CudaResidentModel* m : models) {
    if (m->device() != device_ || m->dim() != first.dim() ||
        m->num_states() != first.num_states()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the models of a set must have the same states and dimension on the workspace's "
          "device (cuda:",
          device_, "): ", first.num_states(), " x ", first.dim(), " on cuda:", first.device(),
          " vs ", m->num_states(), " x ", m->dim(), " on cuda:", m->device()));
    }
    if (m->SplitScratchFloats(frames) > capacity_.split_floats) {
      return absl::InvalidArgumentError(
          absl::StrCat(frames, " frames in one launch need ", m->SplitScratchFloats(frames),
                       " floats of split scratch, the workspace holds ", capacity_.split_floats));
    }
  }
  if (first.dim() > capacity_.dim || first.num_states() > capacity_.states) {
    return absl::InvalidArgumentError(absl::StrCat("models of ", first.num_states(), " states x ",
                                                   first.dim(), " dims, the workspace holds ",
                                                   capacity_.states, " x ", capacity_.dim));
  }
  int64_t covered = 0;
  for (const FusionSegment& segment : segments) {
    if (segment.frames < 0) return absl::InvalidArgumentError("a segment of negative length");
    covered += segment.frames;
  }
  if (covered != frames) {
    return absl::InvalidArgumentError(
        absl::StrCat("the segments cover ", covered, " frames of a batch of ", frames));
  }
  return absl::OkStatus();
}

absl::Status CudaWorkspace::Enqueue(std::span<const CudaResidentModel* const> models,
                                    std::span<const CudaKernelConfig> configs,
                                    std::span<const FusionSegment> segments, int32_t frames,
                                    bool copy_model_scores) {
  GMM_RETURN_IF_ERROR(CheckBatch(models, configs, segments, frames));
  GMM_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
  last_frames_ = frames;
  last_states_ = models.front()->num_states();
  last_copied_models_ = copy_model_scores && models.size() > 1;
  last_encoded_ = last_beam_ = false;
  last_encoded16_ = nullptr;
  if (absl::Status s = EnqueueBatch(models, configs, segments, frames); !s.ok()) {
    // Whatever was enqueued before the failure finishes before the buffers are used again.
    (void)cudaStreamSynchronize(stream_);
    return s;
  }
  in_flight_ = true;
  return absl::OkStatus();
}

absl::Status CudaWorkspace::EnqueueBatch(std::span<const CudaResidentModel* const> models,
                                         std::span<const CudaKernelConfig> configs,
                                         std::span<const FusionSegment> segments, int32_t frames) {
  if (frames == 0) return absl::OkStatus();
  const int32_t num_models = int32_t(models.size());
  const int32_t states = last_states_;
  const size_t batch_floats = size_t(frames) * size_t(states);
  GMM_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(device_feats_.get(), pinned_feats_.get(),
                                           size_t(frames) * models.front()->dim() * sizeof(float),
                                           cudaMemcpyHostToDevice, stream_));
  // One model writes the output directly; several write their own buffers for the fusion.
  float* outputs = num_models == 1 ? device_fused_.get() : device_models_.get();
  if (poison_output_) {
    // All bits set is a NaN.
    GMM_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(device_fused_.get(), 0xff, batch_floats * sizeof(float), stream_));
    GMM_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(outputs, 0xff, size_t(num_models) * batch_floats * sizeof(float), stream_));
  }
  for (int32_t k = 0; k < num_models; ++k) {
    GMM_RETURN_IF_ERROR(models[size_t(k)]->Launch(configs[size_t(k)], device_feats_.get(), frames,
                                                  outputs + size_t(k) * batch_floats,
                                                  split_scratch_.get(), stream_));
  }
  bool fused = num_models == 1;
  if (num_models > 1) {
    GMM_RETURN_IF_ERROR(EnqueueFusion(segments, num_models, frames, states, &fused));
  }
  // Where every segment asked for an encoding the float rows stay on the device: only the rows
  // the kernel leaves to the host are fetched (FetchFusedRows), and a batch does not carry 20 KB
  // a frame across the bus that nobody reads.
  const bool all_encoded = std::all_of(segments.begin(), segments.end(), [&](const auto& s) {
    return s.encoding != DeviceScoreEncoding::kNone && (num_models == 1 || s.fusion != nullptr);
  });
  last_fused_here_ = fused && !all_encoded;
  if (last_fused_here_) {
    GMM_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(pinned_fused_.get(), device_fused_.get(),
                                             batch_floats * sizeof(float), cudaMemcpyDeviceToHost,
                                             stream_));
  }
  if (last_copied_models_) {
    GMM_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(pinned_models_.get(), device_models_.get(),
                                             size_t(num_models) * batch_floats * sizeof(float),
                                             cudaMemcpyDeviceToHost, stream_));
  }
  if (fused) GMM_RETURN_IF_ERROR(EnqueueEncoding(segments, num_models, frames, states));
  return absl::OkStatus();
}

static_assert(uint8_t(DeviceScoreEncoding::kFloat16) == uint8_t(DeviceRowEncoding::kFloat16) &&
              uint8_t(DeviceScoreEncoding::kRelative16) ==
                  uint8_t(DeviceRowEncoding::kRelative16) &&
              uint8_t(DeviceScoreEncoding::kBeamSparse) == uint8_t(DeviceRowEncoding::kBeamSparse));

// Candidates a frame has room for: enough for any max_states a decoder sets in practice (a row
// with more within its beam is selected on the host from its float row, as before).
constexpr int32_t kMaxBeamCandidates = 1024;

absl::Status CudaWorkspace::FetchFusedRows(int32_t first, int32_t rows) {
  if (in_flight_) return absl::FailedPreconditionError("FetchFusedRows before Wait");
  if (first < 0 || rows < 0 || first + rows > last_frames_) {
    return absl::InvalidArgumentError(
        absl::StrCat("fused rows ", first, "+", rows, " of a batch of ", last_frames_, " frames"));
  }
  if (last_fused_here_ || rows == 0) return absl::OkStatus();
  const size_t offset = size_t(first) * size_t(last_states_);
  GMM_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));  // the calling thread's device
  GMM_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
      pinned_fused_.get() + offset, device_fused_.get() + offset,
      size_t(rows) * size_t(last_states_) * sizeof(float), cudaMemcpyDeviceToHost, stream_));
  return CudaStatus(cudaStreamSynchronize(stream_), "fetching fused rows");
}

BeamCandidates CudaWorkspace::beam_candidates() const {
  if (!last_beam_) return {};
  return {beam_counts_.get(), beam_scores_.get(), beam_states_.get(), beam_capacity_};
}

absl::Status CudaWorkspace::EnqueueEncoding(std::span<const FusionSegment> segments, int32_t models,
                                            int32_t frames, int32_t states) {
  bool any16 = false, any_beam = false;
  int32_t t = 0;
  for (const FusionSegment& segment : segments) {
    // Rows left unfused have nothing to encode.
    const DeviceScoreEncoding encoding =
        models == 1 || segment.fusion != nullptr ? segment.encoding : DeviceScoreEncoding::kNone;
    any16 = any16 || encoding == DeviceScoreEncoding::kFloat16 ||
            encoding == DeviceScoreEncoding::kRelative16;
    any_beam = any_beam || encoding == DeviceScoreEncoding::kBeamSparse;
    std::fill_n(pinned_modes_.get() + t, segment.frames, static_cast<DeviceRowEncoding>(encoding));
    std::fill_n(pinned_beams_.get() + t, segment.frames, segment.beam);
    t += segment.frames;
  }
  if (!any16 && !any_beam) return absl::OkStatus();
  DeviceBeamOutput beam;
  if (any_beam) {
    const int32_t capacity = std::min(states, kMaxBeamCandidates);
    if (beam_frames_ < capacity_.frames || beam_capacity_ < capacity) {
      // No batch is in flight on this workspace: its last Wait has returned.
      beam_scores_ = {};
      beam_states_ = {};
      beam_counts_ = {};
      beam_frames_ = beam_capacity_ = 0;
      const size_t room = size_t(capacity_.frames) * size_t(capacity);
      GMM_ASSIGN_OR_RETURN(beam_scores_, PinnedArray<float>::Allocate(room));
      GMM_ASSIGN_OR_RETURN(beam_states_, PinnedArray<int32_t>::Allocate(room));
      GMM_ASSIGN_OR_RETURN(beam_counts_, PinnedArray<int32_t>::Allocate(size_t(capacity_.frames)));
      beam_frames_ = capacity_.frames;
      beam_capacity_ = capacity;
    }
    GMM_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(device_beams_.get(), pinned_beams_.get(),
                                             size_t(frames) * sizeof(float), cudaMemcpyHostToDevice,
                                             stream_));
    // Pinned memory is mapped into the device's address space (unified addressing).
    void* scores = nullptr;
    void* states_out = nullptr;
    void* counts = nullptr;
    GMM_CUDA_RETURN_IF_ERROR(cudaHostGetDevicePointer(&scores, beam_scores_.get(), 0));
    GMM_CUDA_RETURN_IF_ERROR(cudaHostGetDevicePointer(&states_out, beam_states_.get(), 0));
    GMM_CUDA_RETURN_IF_ERROR(cudaHostGetDevicePointer(&counts, beam_counts_.get(), 0));
    beam = {device_beams_.get(), beam_capacity_, static_cast<float*>(scores),
            static_cast<int32_t*>(states_out), static_cast<int32_t*>(counts)};
  }
  GMM_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(device_modes_.get(), pinned_modes_.get(),
                                           size_t(frames) * sizeof(DeviceRowEncoding),
                                           cudaMemcpyHostToDevice, stream_));
  GMM_RETURN_IF_ERROR(LaunchEncodeRows(
      device_fused_.get(), frames, states, device_modes_.get(), device_encoded_.get(),
      device_best_score_.get(), device_best_state_.get(), any_beam ? &beam : nullptr, stream_));
  if (any16) {
    GMM_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(encoded_buffer_.get(), device_encoded_.get(),
                                             size_t(frames) * size_t(states) * sizeof(uint16_t),
                                             cudaMemcpyDeviceToHost, stream_));
  }
  GMM_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(pinned_best_score_.get(), device_best_score_.get(),
                                           size_t(frames) * sizeof(float), cudaMemcpyDeviceToHost,
                                           stream_));
  GMM_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(pinned_best_state_.get(), device_best_state_.get(),
                                           size_t(frames) * sizeof(int32_t), cudaMemcpyDeviceToHost,
                                           stream_));
  last_encoded_ = true;
  last_encoded16_ = any16 ? static_cast<const uint16_t*>(encoded_buffer_.get()) : nullptr;
  last_beam_ = any_beam;
  return absl::OkStatus();
}

absl::Status CudaWorkspace::EnqueueFusion(std::span<const FusionSegment> segments, int32_t models,
                                          int32_t frames, int32_t states, bool* fused) {
  for (const FusionSegment& segment : segments) {
    if (segment.fusion == nullptr || segment.fusion->rule != FusionRule::kSelectBest) continue;
    if (segments.size() != 1) {
      return absl::InvalidArgumentError(
          "select fusion on the device must be a batch's only segment");
    }
    *fused = true;
    return EnqueueSelect(*segment.fusion, models, frames, states);
  }
  int32_t table = 0;
  int32_t t = 0;
  for (const FusionSegment& segment : segments) {
    int32_t index = -1;
    if (segment.fusion != nullptr) {
      if (segment.fusion->weights.size() != size_t(models)) {
        return absl::InvalidArgumentError(absl::StrCat(segment.fusion->weights.size(),
                                                       " fusion weights for ", models, " models"));
      }
      DeviceFusionSegment& d = pinned_segments_.get()[table];
      d.rule = ToDevice(segment.fusion->rule);
      std::copy(segment.fusion->weights.begin(), segment.fusion->weights.end(), d.weights);
      index = table++;
    }
    std::fill_n(pinned_frame_segment_.get() + t, segment.frames, index);
    t += segment.frames;
  }
  *fused = table > 0;
  if (!*fused) return absl::OkStatus();
  GMM_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(device_segments_.get(), pinned_segments_.get(),
                                           size_t(table) * sizeof(DeviceFusionSegment),
                                           cudaMemcpyHostToDevice, stream_));
  GMM_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(device_frame_segment_.get(), pinned_frame_segment_.get(),
                                           size_t(frames) * sizeof(int32_t), cudaMemcpyHostToDevice,
                                           stream_));
  return LaunchFuseElementwise(device_models_.get(), models, frames, states, device_segments_.get(),
                               device_frame_segment_.get(), device_fused_.get(), stream_);
}

absl::Status CudaWorkspace::EnqueueSelect(const FusionSpec& spec, int32_t models, int32_t frames,
                                          int32_t states) {
  if (select_frames_seen_ == 0) {
    const size_t ring = size_t(models) * size_t(spec.select_window);
    if (select_recent_.size() != ring || select_sums_.size() != size_t(models)) {
      device_bytes_ -= int64_t(select_recent_.bytes() + select_sums_.bytes());
      select_recent_ = {};
      select_sums_ = {};
      GMM_RETURN_IF_ERROR(CheckDeviceRoom(
          device_, int64_t((ring + size_t(models)) * sizeof(double)),
          absl::StrCat("the select rule's last ", spec.select_window, " frames need")));
      GMM_ASSIGN_OR_RETURN(select_recent_, DeviceArray<double>::Allocate(ring));
      GMM_ASSIGN_OR_RETURN(select_sums_, DeviceArray<double>::Allocate(size_t(models)));
      device_bytes_ += int64_t(select_recent_.bytes() + select_sums_.bytes());
    }
    GMM_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(select_sums_.get(), 0, select_sums_.bytes(), stream_));
    select_window_ = spec.select_window;
    select_models_ = models;
  } else if (spec.select_window != select_window_ || models != select_models_) {
    return absl::FailedPreconditionError(
        "the select rule changed its window or models within a sequence: ResetSelect first");
  }
  const DeviceSelectState state{select_recent_.get(), select_sums_.get(), select_window_};
  GMM_RETURN_IF_ERROR(LaunchSelect(device_models_.get(), models, frames, states, state,
                                   select_frames_seen_, frame_best_.get(), window_sums_.get(),
                                   device_fused_.get(), stream_));
  select_frames_seen_ += frames;
  return absl::OkStatus();
}

std::shared_ptr<const uint16_t> CudaWorkspace::LendEncoded16() {
  if (in_flight_ || last_encoded16_ == nullptr || last_encoded16_ != encoded_buffer_.get()) {
    return nullptr;
  }
  std::shared_ptr<void> next = encoded_pool_->TryTake();
  if (next == nullptr) return nullptr;
  std::shared_ptr<void> lent = std::exchange(encoded_buffer_, std::move(next));
  const auto* rows = static_cast<const uint16_t*>(lent.get());
  return std::shared_ptr<const uint16_t>(std::move(lent), rows);
}

absl::Status CudaWorkspace::Wait() {
  if (!in_flight_) return absl::FailedPreconditionError("no batch in flight on this workspace");
  in_flight_ = false;
  GMM_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
  GMM_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
  return absl::OkStatus();
}

}  // namespace gmmscore

// The one staging and workspace type of the CUDA backend: pinned staging, device buffers and a
// CUDA stream for one batch at a time. A batch of frames is scored against a set of resident
// models (CudaResidentModel: same states and dimension, this device), each in the kernel
// configuration the caller chose (kernel_chooser.h), with the fusion epilogue on the device
// (fusion_kernels.h): the features in through pinned staging, each model's kernels into its own
// device buffer, the segments fused, and only the fused scores copied back (every model's scores
// too only when asked). One model needs no fusion: its kernels write the output buffer directly.
//
// One batch at a time per workspace (Enqueue, then Wait before the next): a pipeline that keeps
// batches in flight together uses one workspace per batch in flight, each with its own stream, so
// that one batch's copies overlap another's kernels. Between batches the autotune may borrow the
// buffers (Borrow).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <span>

#include "absl/status/statusor.h"
#include "kernels/compute_device.h"
#include "kernels/cuda/common/cuda_buffers.h"
#include "kernels/cuda/common/pinned_buffer_pool.h"
#include "kernels/cuda/score/cuda_resident_model.h"
#include "kernels/cuda/score/encode_rows_kernel.h"
#include "kernels/cuda/score/fusion_kernels.h"
#include "kernels/cuda/score/kernel_config.h"
#include "model/fusion.h"

namespace gmmscore {

// Buffers of 16-bit rows a workspace may have lent out at once, beside the one it fills next:
// each is held from a batch's end until the last of its windows' responses is sent (a few
// milliseconds where clients read), and one is capacity().frames x states x 2 bytes.
inline constexpr int32_t kLentEncodedBuffers = 8;

// What the buffers hold; Reserve grows each to at least what it is asked for.
struct WorkspaceCapacity {
  int32_t frames = 0;  // per batch
  int32_t dim = 0;
  int32_t states = 0;
  int32_t models = 1;
  int64_t split_floats = 0;  // the largest SplitScratchFloats(frames) of the models
};

class CudaWorkspace {
 public:
  // poison_output fills the output buffers with NaN before every batch, so that a test sees any
  // score nothing wrote.
  static absl::StatusOr<std::unique_ptr<CudaWorkspace>> Create(int device,
                                                               bool poison_output = false);
  ~CudaWorkspace();
  CudaWorkspace(const CudaWorkspace&) = delete;
  CudaWorkspace& operator=(const CudaWorkspace&) = delete;

  // Grows the buffers to hold `capacity` (and what they held before). Refuses with
  // ResourceExhausted, naming the device and the bytes, growth the device has no room for; the
  // old buffers are kept then. Not while a batch is in flight.
  absl::Status Reserve(const WorkspaceCapacity& capacity);
  const WorkspaceCapacity& capacity() const { return capacity_; }
  // Device bytes of buffers for `capacity`: features, fused scores, per-model scores and the
  // select rule's per-frame sums (several models only), split scratch, the segment table, the
  // 16-bit rows and each frame's best.
  static int64_t DeviceBytesFor(const WorkspaceCapacity& capacity);
  int64_t device_bytes() const { return device_bytes_; }
  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }

  // Where the caller puts the next batch's features, rows of dim floats (pinned).
  float* staged_feats() const { return pinned_feats_.get(); }
  // Enqueues on stream(): `frames` staged frames in, model k's kernels in configs[k], the
  // fusion of each segment (their frames add up to `frames`), the fused scores out, and with
  // copy_model_scores every model's scores out. One model: its scores are the fused ones. On a
  // failure nothing is left in flight.
  absl::Status Enqueue(std::span<const CudaResidentModel* const> models,
                       std::span<const CudaKernelConfig> configs,
                       std::span<const FusionSegment> segments, int32_t frames,
                       bool copy_model_scores);
  // Waits for the batch (the runtime's default wait, which spins: sleeping on a blocking-sync
  // event instead cost 7-14% of the throughput at saturation, docs/PERFORMANCE.md); a fault in
  // its kernels surfaces here.
  absl::Status Wait();
  // After Wait, frames x states rows in pinned memory: the fused scores (rows of unfused
  // segments unspecified), and model k's scores (with copy_model_scores).
  const float* fused() const { return pinned_fused_.get(); }
  // After Wait: rows [first, first + rows) of fused() copied from the device where the batch left
  // them there (every segment asked for an encoding: its float rows are only read for rows the
  // kernel left to the host). Safe from several threads.
  absl::Status FetchFusedRows(int32_t first, int32_t rows);
  const float* model_scores(int32_t k) const;
  // After Wait, where a segment of the batch asked for a 16-bit encoding (else null): the rows in
  // their encodings and the frames' best states and scores (encode_rows_kernel.h).
  const uint16_t* encoded16() const { return last_encoded16_; }
  // After Wait, where encoded16() is not null: the buffer that holds it, handed to the caller to
  // keep as long as it reads the rows (BatchSlot::LendEncoded16); the workspace goes on with
  // another of its kLentEncodedBuffers. Null (the caller copies the rows) while all are out, or
  // when this batch's was lent already.
  std::shared_ptr<const uint16_t> LendEncoded16();
  const int32_t* best_states() const { return last_encoded_ ? pinned_best_state_.get() : nullptr; }
  const float* best_scores() const { return last_encoded_ ? pinned_best_score_.get() : nullptr; }
  // After Wait, where a segment asked for kBeamSparse (else counts null): the candidates, in
  // pinned host memory the kernel wrote directly.
  BeamCandidates beam_candidates() const;
  // The next select batch starts a new sequence of frames.
  void ResetSelect() { select_frames_seen_ = 0; }

  // The device buffers, lent between batches (the autotune times its candidates in them):
  // capacity().frames frames of features and of scores, and the split scratch.
  struct Borrowed {
    float* feats = nullptr;
    float* scores = nullptr;
    float* split_scratch = nullptr;
    cudaStream_t stream = nullptr;
  };
  absl::StatusOr<Borrowed> Borrow() const;

 private:
  explicit CudaWorkspace(int device, bool poison_output)
      : device_(device), poison_output_(poison_output) {}
  absl::Status CheckBatch(std::span<const CudaResidentModel* const> models,
                          std::span<const CudaKernelConfig> configs,
                          std::span<const FusionSegment> segments, int32_t frames) const;
  absl::Status EnqueueBatch(std::span<const CudaResidentModel* const> models,
                            std::span<const CudaKernelConfig> configs,
                            std::span<const FusionSegment> segments, int32_t frames);
  // The encodings the segments ask for, of the fused rows, and their copies out.
  absl::Status EnqueueEncoding(std::span<const FusionSegment> segments, int32_t models,
                               int32_t frames, int32_t states);
  // The fusion of models x frames scores in device_models_ into device_fused_.
  absl::Status EnqueueFusion(std::span<const FusionSegment> segments, int32_t models,
                             int32_t frames, int32_t states, bool* fused);
  absl::Status EnqueueSelect(const FusionSpec& spec, int32_t models, int32_t frames,
                             int32_t states);

  const int device_;
  const bool poison_output_;
  cudaStream_t stream_ = nullptr;
  WorkspaceCapacity capacity_;
  int64_t device_bytes_ = 0;
  bool in_flight_ = false;
  int32_t last_frames_ = 0;
  int32_t last_states_ = 0;
  bool last_copied_models_ = false;
  bool last_fused_here_ = false;  // the fused rows were copied back
  bool last_encoded_ = false;     // some segment asked for an encoding: the frames' best
  const uint16_t* last_encoded16_ = nullptr;  // where the 16-bit rows went, if some asked
  bool last_beam_ = false;                    // some asked for beam candidates

  DeviceArray<float> device_feats_;   // [frames][dim]
  DeviceArray<float> device_fused_;   // [frames][states]
  DeviceArray<float> device_models_;  // [models][frames][states], models > 1
  DeviceArray<float> split_scratch_;  // shared by the models, launched one after another
  DeviceArray<DeviceFusionSegment> device_segments_;  // [frames]: at most a segment a frame
  DeviceArray<int32_t> device_frame_segment_;         // [frames]
  DeviceArray<float> frame_best_;                     // [models][frames]: select
  DeviceArray<double> window_sums_;                   // [models][frames]: select
  DeviceArray<DeviceRowEncoding> device_modes_;       // [frames]
  DeviceArray<uint16_t> device_encoded_;              // [frames][states]
  DeviceArray<float> device_best_score_;              // [frames]
  DeviceArray<int32_t> device_best_state_;            // [frames]
  PinnedArray<float> pinned_feats_;
  PinnedArray<float> pinned_fused_;
  PinnedArray<float> pinned_models_;
  PinnedArray<DeviceFusionSegment> pinned_segments_;
  PinnedArray<int32_t> pinned_frame_segment_;
  PinnedArray<DeviceRowEncoding> pinned_modes_;
  // The 16-bit rows' buffers (capacity().frames x states), one of them the next batch's.
  std::shared_ptr<PinnedBufferPool> encoded_pool_;
  std::shared_ptr<void> encoded_buffer_;
  PinnedArray<float> pinned_best_score_;
  PinnedArray<int32_t> pinned_best_state_;
  // BEAM_SPARSE: each frame's beam in, and its candidates out, written by the kernel straight into
  // pinned host memory (only the kept entries cross the bus). The candidates' buffers are made at
  // the first batch that asks, for capacity().frames frames of beam_capacity_ each.
  DeviceArray<float> device_beams_;  // [frames]
  PinnedArray<float> pinned_beams_;  // [frames]
  int32_t beam_capacity_ = 0;
  int32_t beam_frames_ = 0;
  PinnedArray<float> beam_scores_;    // [beam_frames_][beam_capacity_]
  PinnedArray<int32_t> beam_states_;  // [beam_frames_][beam_capacity_]
  PinnedArray<int32_t> beam_counts_;  // [beam_frames_]

  // The select rule's running sums on the device, for one sequence at a time.
  DeviceArray<double> select_recent_;  // [models][window]
  DeviceArray<double> select_sums_;    // [models]
  int32_t select_window_ = 0;
  int32_t select_models_ = 0;
  int64_t select_frames_seen_ = 0;
};

}  // namespace gmmscore
